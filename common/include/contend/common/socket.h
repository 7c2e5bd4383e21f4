#pragma once
// The one socket layer (Mahimahi's util/socket): an Endpoint (IPv4 address and port), a Socket
// that owns its descriptor (an Fd, O_CLOEXEC) and a name for its errors, and TcpSocket and
// UdpSocket on it. Every system call goes through one checked wrapper, so an error says what was
// attempted on which socket and what the system said:
//   "setsockopt(TCP_CONGESTION=reno) on rank 1 (198.18.0.2:29500): No such file or directory".
// The errno of a failed call is kept in Error::os_errno, for callers that retry (a connect
// refused while the peer is not up yet). Nothing else in contend calls socket options by hand.
// Not thread-safe in general: one owner. A connected TcpSocket may be written by one thread and
// read by another at the same time (send_all and recv_exact share nothing but the descriptor).

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "contend/common/fd.h"
#include "contend/common/result.h"

namespace contend {

// A dotted-quad IPv4 address; kInvalidArgument quoting the text ("localhost" is 127.0.0.1).
Result<in_addr> parse_ipv4(std::string_view text);

class Endpoint {
 public:
  Endpoint() = default;
  // "198.18.0.2:29500" or "localhost:29500": kInvalidArgument quoting the text, naming what is
  // wrong (no port, a port outside 1-65535, not an IPv4 address).
  static Result<Endpoint> parse(std::string_view text);
  // `ip` a dotted quad ("" is any address), `port` 0-65535 (0: any port).
  static Result<Endpoint> make(std::string_view ip, int port);

  std::string ip() const;
  int port() const;
  std::string str() const;  // "198.18.0.2:29500"
  // The same port on every address (a listener's).
  Endpoint any_address() const;
  const sockaddr_in& raw() const { return addr_; }

 private:
  sockaddr_in addr_{};
};

class Socket {
 public:
  Socket(Socket&&) noexcept = default;
  Socket& operator=(Socket&&) noexcept = default;
  virtual ~Socket() = default;

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  // What the socket is for, as errors name it ("flow bg sink in contend-r.n1").
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // setsockopt(level, option, value); `option_name` names it in the error ("SO_RCVBUF").
  Result<void> set_option(int level, int option, int value, const char* option_name);
  Result<void> set_nonblocking();
  // SO_RCVTIMEO: a blocking receive fails with EAGAIN after `wait` without data (0: never).
  Result<void> set_receive_timeout(std::chrono::milliseconds wait);
  Result<void> bind(const Endpoint& local);
  // The address the kernel bound (after bind or connect).
  Result<Endpoint> local_endpoint() const;
  // shutdown(how): SHUT_WR after the last frame, SHUT_RDWR to wake a blocked reader.
  Result<void> shutdown(int how);
  // poll() for input: true when readable (or closed) within `wait`, false when not.
  Result<bool> wait_readable(std::chrono::milliseconds wait) const;
  // recv(); nullopt when a non-blocking socket has nothing, 0 at the end of the stream.
  Result<std::optional<std::size_t>> recv_some(void* data, std::size_t n);

 protected:
  Socket(Fd fd, std::string name) : fd_(std::move(fd)), name_(std::move(name)) {}
  // socket(AF_INET, type | SOCK_CLOEXEC); errors name `name`.
  static Result<Fd> open_fd(int type, const std::string& name);
  // The error of `call` (with `detail`, e.g. the option and value) having failed with `err`.
  Error failed(const std::string& call, int err) const;
  // Shared by TcpSocket and UdpSocket.
  Result<void> connect_to(const Endpoint& peer);

 private:
  Fd fd_;
  std::string name_;
};

class TcpSocket : public Socket {
 public:
  // A new stream socket named `name`.
  static Result<TcpSocket> open(std::string name);

  // SO_REUSEADDR, bind and listen(backlog).
  Result<void> listen_on(const Endpoint& local, int backlog = 128);
  // A pending connection within `wait`, or nullopt; the connection is named `name`.
  Result<std::optional<TcpSocket>> accept(std::chrono::milliseconds wait, std::string name);
  // connect(); a refused or unreachable peer keeps its errno in Error::os_errno (peer_not_up).
  Result<void> connect(const Endpoint& peer);

  Result<void> set_no_delay();
  // TCP_CONGESTION; kInvalidArgument naming the ones this kernel has when it lacks `algorithm`.
  Result<void> set_congestion(const std::string& algorithm);
  // SO_MAX_PACING_RATE (fq or the kernel's internal pacing honours it).
  Result<void> set_pacing_rate(std::uint64_t bytes_per_s);
  // SO_SNDBUF and SO_RCVBUF (the kernel doubles and caps them; autotuning is off after this).
  Result<void> set_buffers(int bytes);
  Result<void> set_receive_buffer(int bytes);

  // Writes all of `iov` (blocking), retrying after EINTR and short writes; MSG_NOSIGNAL.
  Result<void> send_all(iovec* iov, int count);
  Result<void> send_all(const void* data, std::size_t n);
  // One send() on a non-blocking socket: the bytes taken, 0 when the buffer is full.
  Result<std::size_t> send_some(const void* data, std::size_t n);
  // Reads exactly `n` bytes (blocking): true; false when the peer closed before the first byte;
  // kIo "connection closed in the middle of a frame" when it closed after it.
  Result<bool> recv_exact(void* data, std::size_t n);

 private:
  using Socket::Socket;
};

class UdpSocket : public Socket {
 public:
  static Result<UdpSocket> open(std::string name);
  // Takes a datagram socket made elsewhere (one end of a socketpair, in tests).
  static UdpSocket adopt(Fd fd, std::string name) { return UdpSocket(std::move(fd), std::move(name)); }

  Result<void> connect(const Endpoint& peer);
  // SO_RCVBUFFORCE where the process may (root), else SO_RCVBUF: a datagram that finds the
  // buffer full is lost.
  Result<void> set_receive_buffer(int bytes);
  // UDP_SEGMENT (GSO: the kernel cuts buffers into datagrams of `segment_bytes`; 0 turns it off).
  Result<void> set_segment_bytes(int segment_bytes);
  // UDP_GRO: datagrams of one GSO buffer arrive as one receive, where the kernel has it.
  Result<void> set_receive_offload();
  // sendmmsg(messages, count): how many messages the kernel took; 0 when its queue is full
  // (EAGAIN, ENOBUFS) or, between hosts, the peer is not listening yet (ECONNREFUSED).
  Result<int> send_batch(mmsghdr* messages, unsigned count);

 private:
  using Socket::Socket;
};

// Whether a connect failed only because the peer is not up yet (refused, unreachable, timed out),
// so that trying again makes sense.
bool peer_not_up(const Error& error);

}  // namespace contend
