#include "contend/common/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace contend {
namespace {

std::string quoted(std::string_view text) {
  return "\"" + std::string(text.substr(0, 80)) + (text.size() > 80 ? "...\"" : "\"");
}

// The congestion controls this kernel offers, for the error that names a missing one.
std::string available_congestion() {
  auto text = read_file("/proc/sys/net/ipv4/tcp_available_congestion_control", 4096);
  std::string out = text ? *text : std::string("unknown");
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

}  // namespace

Result<in_addr> parse_ipv4(std::string_view text) {
  const std::string host = text == "localhost" ? std::string("127.0.0.1") : std::string(text);
  in_addr a{};
  if (host.find('\0') != std::string::npos || ::inet_pton(AF_INET, host.c_str(), &a) != 1) {
    return make_error(Errc::kInvalidArgument, "expected an IPv4 address, got " + quoted(text));
  }
  return a;
}

Result<Endpoint> Endpoint::parse(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return make_error(Errc::kInvalidArgument, "expected host:port, got " + quoted(text));
  }
  const std::string port_text(text.substr(colon + 1));
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 1 || port > 65535) {
    return make_error(Errc::kInvalidArgument, "expected a port 1-65535 in " + quoted(text));
  }
  auto made = make(text.substr(0, colon), static_cast<int>(port));
  if (!made) {
    return make_error(Errc::kInvalidArgument, "endpoint " + quoted(text) + ": " + made.error().message);
  }
  return made;
}

Result<Endpoint> Endpoint::make(std::string_view ip, int port) {
  if (port < 0 || port > 65535) {
    return make_error(Errc::kInvalidArgument, "port " + std::to_string(port) + " outside 0-65535");
  }
  Endpoint e;
  e.addr_.sin_family = AF_INET;
  e.addr_.sin_port = htons(static_cast<std::uint16_t>(port));
  e.addr_.sin_addr.s_addr = htonl(INADDR_ANY);
  if (!ip.empty()) {
    auto a = parse_ipv4(ip);
    if (!a) {
      return a.error();
    }
    e.addr_.sin_addr = *a;
  }
  return e;
}

std::string Endpoint::ip() const {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr_.sin_addr, buf, sizeof buf);
  return buf;
}

int Endpoint::port() const {
  return ntohs(addr_.sin_port);
}

std::string Endpoint::str() const {
  return ip() + ":" + std::to_string(port());
}

Endpoint Endpoint::any_address() const {
  Endpoint e = *this;
  e.addr_.sin_addr.s_addr = htonl(INADDR_ANY);
  return e;
}

Result<Fd> Socket::open_fd(int type, const std::string& name) {
  Fd fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return errno_error(errno, "socket() for " + name);
  }
  return fd;
}

Error Socket::failed(const std::string& call, int err) const {
  return errno_error(err, call + " on " + name_);
}

Result<void> Socket::set_option(int level, int option, int value, const char* option_name) {
  if (::setsockopt(fd(), level, option, &value, sizeof value) != 0) {
    return failed("setsockopt(" + std::string(option_name) + "=" + std::to_string(value) + ")", errno);
  }
  return {};
}

Result<void> Socket::set_nonblocking() {
  const int flags = ::fcntl(fd(), F_GETFL);
  if (flags < 0 || ::fcntl(fd(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return failed("fcntl(O_NONBLOCK)", errno);
  }
  return {};
}

Result<void> Socket::bind(const Endpoint& local) {
  if (::bind(fd(), reinterpret_cast<const sockaddr*>(&local.raw()), sizeof(sockaddr_in)) != 0) {
    return failed("bind(" + local.str() + ")", errno);
  }
  return {};
}

Result<Endpoint> Socket::local_endpoint() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return failed("getsockname()", errno);
  }
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return Endpoint::make(buf, ntohs(a.sin_port));
}

Result<void> Socket::shutdown(int how) {
  if (::shutdown(fd(), how) != 0 && errno != ENOTCONN) {
    return failed("shutdown()", errno);
  }
  return {};
}

Result<void> Socket::set_receive_timeout(std::chrono::milliseconds wait) {
  timeval tv{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
  if (::setsockopt(fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    return failed("setsockopt(SO_RCVTIMEO)", errno);
  }
  return {};
}

Result<bool> Socket::wait_readable(std::chrono::milliseconds wait) const {
  pollfd p{fd(), POLLIN, 0};
  for (;;) {
    const int n = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (n >= 0) {
      return n > 0;
    }
    if (errno != EINTR) {
      return failed("poll()", errno);
    }
  }
}

Result<void> Socket::connect_to(const Endpoint& peer) {
  for (;;) {
    if (::connect(fd(), reinterpret_cast<const sockaddr*>(&peer.raw()), sizeof(sockaddr_in)) == 0) {
      return {};
    }
    if (errno != EINTR) {
      return failed("connect(" + peer.str() + ")", errno);
    }
  }
}

Result<std::optional<std::size_t>> Socket::recv_some(void* data, std::size_t n) {
  for (;;) {
    const ssize_t r = ::recv(fd(), data, n, 0);
    if (r >= 0) {
      return std::optional<std::size_t>(static_cast<std::size_t>(r));
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return std::optional<std::size_t>();
    }
    if (errno != EINTR) {
      return failed("recv()", errno);
    }
  }
}

Result<TcpSocket> TcpSocket::open(std::string name) {
  auto fd = open_fd(SOCK_STREAM, name);
  if (!fd) {
    return fd.error();
  }
  return TcpSocket(std::move(*fd), std::move(name));
}

Result<void> TcpSocket::listen_on(const Endpoint& local, int backlog) {
  if (auto ok = set_option(SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR"); !ok) {
    return ok;
  }
  if (auto ok = bind(local); !ok) {
    return ok;
  }
  if (::listen(fd(), backlog) != 0) {
    return failed("listen(" + local.str() + ")", errno);
  }
  return {};
}

Result<std::optional<TcpSocket>> TcpSocket::accept(std::chrono::milliseconds wait, std::string name) {
  auto readable = wait_readable(wait);
  if (!readable) {
    return readable.error();
  }
  if (!*readable) {
    return std::optional<TcpSocket>();
  }
  Fd fd(::accept4(this->fd(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!fd.valid()) {
    if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) {
      return std::optional<TcpSocket>();
    }
    return failed("accept()", errno);
  }
  return std::optional<TcpSocket>(TcpSocket(std::move(fd), std::move(name)));
}

Result<void> TcpSocket::connect(const Endpoint& peer) {
  return connect_to(peer);
}

Result<void> TcpSocket::set_no_delay() {
  return set_option(IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
}

Result<void> TcpSocket::set_congestion(const std::string& algorithm) {
  if (::setsockopt(fd(), IPPROTO_TCP, TCP_CONGESTION, algorithm.c_str(), static_cast<socklen_t>(algorithm.size())) !=
      0) {
    Error e = failed("setsockopt(TCP_CONGESTION=" + algorithm + ")", errno);
    e.code = Errc::kInvalidArgument;
    e.message += " (this kernel has: " + available_congestion() + ")";
    return e;
  }
  return {};
}

Result<void> TcpSocket::set_pacing_rate(std::uint64_t bytes_per_s) {
  if (::setsockopt(fd(), SOL_SOCKET, SO_MAX_PACING_RATE, &bytes_per_s, sizeof bytes_per_s) != 0) {
    return failed("setsockopt(SO_MAX_PACING_RATE=" + std::to_string(bytes_per_s) + ")", errno);
  }
  return {};
}

Result<void> TcpSocket::set_buffers(int bytes) {
  if (auto ok = set_option(SOL_SOCKET, SO_SNDBUF, bytes, "SO_SNDBUF"); !ok) {
    return ok;
  }
  return set_receive_buffer(bytes);
}

Result<void> TcpSocket::set_receive_buffer(int bytes) {
  return set_option(SOL_SOCKET, SO_RCVBUF, bytes, "SO_RCVBUF");
}

Result<void> TcpSocket::send_all(iovec* iov, int count) {
  while (count > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(count);
    const ssize_t w = ::sendmsg(fd(), &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      return failed("send()", errno);
    }
    auto left = static_cast<std::size_t>(w);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return {};
}

Result<void> TcpSocket::send_all(const void* data, std::size_t n) {
  iovec iov{const_cast<void*>(data), n};
  return send_all(&iov, 1);
}

Result<std::size_t> TcpSocket::send_some(const void* data, std::size_t n) {
  for (;;) {
    const ssize_t w = ::send(fd(), data, n, MSG_NOSIGNAL);
    if (w >= 0) {
      return static_cast<std::size_t>(w);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return std::size_t{0};
    }
    if (errno != EINTR) {
      return failed("send()", errno);
    }
  }
}

Result<bool> TcpSocket::recv_exact(void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd(), p + got, n - got, MSG_WAITALL);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return failed("recv()", errno);
    }
    if (r == 0) {
      if (got == 0) {
        return false;
      }
      return make_error(Errc::kIo, "connection closed in the middle of a frame");
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

Result<UdpSocket> UdpSocket::open(std::string name) {
  auto fd = open_fd(SOCK_DGRAM, name);
  if (!fd) {
    return fd.error();
  }
  return UdpSocket(std::move(*fd), std::move(name));
}

Result<void> UdpSocket::connect(const Endpoint& peer) {
  return connect_to(peer);
}

Result<void> UdpSocket::set_receive_buffer(int bytes) {
  if (set_option(SOL_SOCKET, SO_RCVBUFFORCE, bytes, "SO_RCVBUFFORCE")) {
    return {};
  }
  return set_option(SOL_SOCKET, SO_RCVBUF, bytes, "SO_RCVBUF");
}

Result<void> UdpSocket::set_segment_bytes(int segment_bytes) {
  return set_option(SOL_UDP, UDP_SEGMENT, segment_bytes, "UDP_SEGMENT");
}

Result<void> UdpSocket::set_receive_offload() {
  return set_option(SOL_UDP, UDP_GRO, 1, "UDP_GRO");
}

Result<int> UdpSocket::send_batch(mmsghdr* messages, unsigned count) {
  for (;;) {
    const int sent = ::sendmmsg(fd(), messages, count, MSG_NOSIGNAL);
    if (sent >= 0) {
      return sent;
    }
    if (errno == EAGAIN || errno == ENOBUFS || errno == ECONNREFUSED) {
      return 0;
    }
    if (errno != EINTR) {
      return failed("sendmmsg()", errno);
    }
  }
}

bool peer_not_up(const Error& error) {
  const int e = error.os_errno;
  return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == ETIMEDOUT;
}

}  // namespace contend
