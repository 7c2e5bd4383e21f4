#include "contend/pipeline/transport/tcp_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <thread>

#include "contend/common/fd.h"
#include "contend/common/units.h"

namespace contend::pipeline {
namespace {

constexpr std::uint32_t kMagic = 0x444E5443;  // "CTND"
constexpr std::uint8_t kHello = 2;
constexpr std::uint8_t kBye = 3;
constexpr std::uint8_t kFailed = 5;  // the sender failed; the payload says why (text)
constexpr std::uint8_t kFlagChecksum = 1;

struct FrameHeader {
  std::uint32_t magic = kMagic;
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  std::uint16_t stage = 0;  // Tag::stage
  std::uint32_t iteration = 0;
  std::uint32_t microbatch = 0;
  std::uint64_t bytes = 0;
  std::uint32_t checksum = 0;
  std::uint32_t reserved2 = 0;
};
static_assert(sizeof(FrameHeader) == 32, "frame header is 32 bytes on the wire");

std::uint32_t fnv1a(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ p[i]) * 16777619u;
  }
  return h;
}

Result<void> write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno_error(errno, "send");
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return {};
}

// Header and payload in one writev where the kernel takes it all, then the rest.
Result<void> write_frame(int fd, const FrameHeader& h, const float* payload) {
  iovec iov[2] = {{const_cast<FrameHeader*>(&h), sizeof h}, {const_cast<float*>(payload), h.bytes}};
  std::size_t total = sizeof h + h.bytes;
  std::size_t done = 0;
  while (done < sizeof h) {
    msghdr msg{};
    iov[0].iov_base = reinterpret_cast<char*>(const_cast<FrameHeader*>(&h)) + done;
    iov[0].iov_len = sizeof h - done;
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    const ssize_t w = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno_error(errno, "send");
    }
    done += static_cast<std::size_t>(w);
  }
  return write_all(fd, reinterpret_cast<const char*>(payload) + (done - sizeof h), total - done);
}

// Reads exactly n bytes; false on a clean end of stream before the first byte.
Result<bool> read_all(int fd, void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, p + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno_error(errno, "recv");
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

Result<sockaddr_in> resolve(const std::string& endpoint) {
  auto hp = parse_endpoint(endpoint);
  if (!hp) {
    return hp.error();
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(hp->second));
  const std::string host = hp->first == "localhost" ? "127.0.0.1" : hp->first;
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    return make_error(Errc::kInvalidArgument,
                      "peer \"" + endpoint + "\": expected an IPv4 address, got \"" + host + "\"");
  }
  return a;
}

Result<void> tune(int fd, const TcpOptions& o) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (o.socket_buffer_bytes > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o.socket_buffer_bytes, sizeof o.socket_buffer_bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o.socket_buffer_bytes, sizeof o.socket_buffer_bytes);
  }
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o.congestion.c_str(),
                   static_cast<socklen_t>(o.congestion.size())) != 0) {
    std::string available;
    if (auto text = read_file("/proc/sys/net/ipv4/tcp_available_congestion_control")) {
      available = *text;
      while (!available.empty() && available.back() == '\n') {
        available.pop_back();
      }
    }
    return make_error(Errc::kInvalidArgument, "congestion control \"" + o.congestion + "\": " + std::strerror(errno) +
                                                  " (available: " + available + ")");
  }
  return {};
}

class Link {
 public:
  using Meter =
      std::function<void(int peer, std::uint64_t bytes, double seconds, std::uint64_t tail_bytes, double tail_seconds)>;
  Link(Fd fd, int peer, std::string name, Mailbox& box, BufferPool& pool, bool checksum, Meter meter)
      : fd_(std::move(fd)),
        peer_(peer),
        name_(std::move(name)),
        box_(box),
        pool_(pool),
        checksum_(checksum),
        meter_(std::move(meter)) {
    receiver_ = std::thread([this] { receive_loop(); });
    sender_ = std::thread([this] { send_loop(); });
  }
  ~Link() { close(); }

  const std::string& name() const { return name_; }

  Result<void> send(Tag tag, std::vector<float> data, Completion complete) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!send_error_.ok()) {
      return send_error_;
    }
    queue_.push_back({tag, std::move(data), std::move(complete)});
    cv_.notify_all();
    return {};
  }

  Result<void> flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return (queue_.empty() && !writing_) || !send_error_.ok(); });
    return send_error_;
  }

  // Makes the closing frame say that this rank failed and why (Transport::abort).
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = why;
  }

  // Sends the closing frame, waits briefly for the peer's, and stops both threads.
  void close() {
    if (closed_.exchange(true)) {
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      cv_.notify_all();
    }
    sender_.join();  // drains the queue and sends the closing frame
    ::shutdown(fd_.get(), SHUT_WR);
    // The peer's receiver sees our bye; once the peer closes too, ours sees its bye and EOF.
    pollfd p{fd_.get(), POLLIN, 0};
    for (int i = 0; i < 40 && !peer_done_.load(); ++i) {
      ::poll(&p, 1, 50);
    }
    ::shutdown(fd_.get(), SHUT_RDWR);
    receiver_.join();
  }

 private:
  struct Item {
    Tag tag;
    std::vector<float> data;
    Completion complete;
  };

  void send_loop() {
    for (;;) {
      Item item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) {
          break;
        }
        item = std::move(queue_.front());
        queue_.pop_front();
        writing_ = true;
      }
      if (item.complete) {
        item.complete(item.data);
        item.complete = nullptr;  // releases what the backend held for it
      }
      FrameHeader h;
      h.kind = static_cast<std::uint8_t>(item.tag.kind);
      h.iteration = static_cast<std::uint32_t>(item.tag.iteration);
      h.microbatch = static_cast<std::uint32_t>(item.tag.microbatch);
      h.stage = static_cast<std::uint16_t>(item.tag.stage);
      h.bytes = item.data.size() * sizeof(float);
      if (checksum_) {
        h.flags = kFlagChecksum;
        h.checksum = fnv1a(item.data.data(), h.bytes);
      }
      auto ok = write_frame(fd_.get(), h, item.data.data());
      pool_.give(std::move(item.data));
      std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
      if (!ok) {
        send_error_ = make_error(ok.error().code, "sending to " + name_ + ": the connection broke (" + name_ +
                                                      " exited or crashed): " + ok.error().message);
        queue_.clear();
      }
      cv_.notify_all();
      if (!ok) {
        return;
      }
    }
    std::string failure;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failure = failure_.substr(0, 4096);
    }
    FrameHeader bye;
    bye.kind = failure.empty() ? kBye : kFailed;
    bye.bytes = failure.size();
    (void)write_all(fd_.get(), &bye, sizeof bye);
    (void)write_all(fd_.get(), failure.data(), failure.size());
  }

  void receive_loop() {
    for (;;) {
      FrameHeader h;
      auto got = read_all(fd_.get(), &h, sizeof h);
      if (!got || !*got) {
        if (!peer_done_.load() && !closed_.load()) {
          box_.fail(peer_,
                    make_error(Errc::kIo, name_ + " closed the connection without finishing (it exited or crashed)" +
                                              (got ? std::string() : ": " + got.error().message)));
        } else if (!peer_done_.load()) {
          box_.fail(peer_, make_error(Errc::kIo, "the connection to " + name_ + " is closed"));
        }
        return;
      }
      if (h.magic != kMagic) {
        box_.fail(peer_, make_error(Errc::kIo, name_ + " sent a frame without contend's magic"));
        return;
      }
      if (h.kind == kBye) {
        peer_done_ = true;
        box_.fail(peer_, make_error(Errc::kIo, name_ + " finished and closed the connection"));
        continue;
      }
      if (h.kind == kFailed) {
        std::string why(std::min<std::uint64_t>(h.bytes, 4096), '\0');
        auto text = read_all(fd_.get(), why.data(), why.size());
        peer_done_ = true;
        box_.fail(peer_, make_error(Errc::kIo, name_ + " failed: " + (text && *text ? why : "(no reason given)")));
        continue;
      }
      std::vector<float> data = pool_.take(h.bytes / sizeof(float));
      // Read in two halves, timing the second apart (TransferTotals says why).
      const std::size_t half = h.bytes / 2;
      const auto t0 = std::chrono::steady_clock::now();
      auto body = read_all(fd_.get(), data.data(), half);
      const auto t_half = std::chrono::steady_clock::now();
      if (body && (*body || half == 0)) {
        body = read_all(fd_.get(), reinterpret_cast<char*>(data.data()) + half, h.bytes - half);
      }
      const auto t1 = std::chrono::steady_clock::now();
      const double seconds = std::chrono::duration<double>(t1 - t0).count();
      const double tail_seconds = std::chrono::duration<double>(t1 - t_half).count();
      if (!body || !*body) {
        box_.fail(peer_, make_error(Errc::kIo, name_ + " closed the connection in the middle of a message"));
        return;
      }
      if ((h.flags & kFlagChecksum) != 0 && fnv1a(data.data(), h.bytes) != h.checksum) {
        box_.fail(peer_, make_error(Errc::kIo, "checksum mismatch in a message from " + name_));
        return;
      }
      if (h.kind != static_cast<std::uint8_t>(Kind::kControl)) {
        meter_(peer_, h.bytes, seconds, h.bytes - half, tail_seconds);
      }
      box_.put(peer_,
               Tag{static_cast<Kind>(h.kind), static_cast<int>(h.iteration), static_cast<int>(h.microbatch), h.stage},
               std::move(data));
    }
  }

  Fd fd_;
  int peer_;
  std::string name_;
  Mailbox& box_;
  BufferPool& pool_;
  bool checksum_;
  Meter meter_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool writing_ = false;
  bool stopping_ = false;
  Result<void> send_error_;
  std::string failure_;  // set by fail(): the closing frame carries it
  std::atomic<bool> closed_{false};
  std::atomic<bool> peer_done_{false};
  std::thread receiver_;
  std::thread sender_;
};

class TcpTransport : public Transport {
 public:
  Result<void> send(int peer, Tag tag, std::vector<float> data, Completion complete = {}) override {
    Link* l = link(peer);
    CONTEND_CHECK(l != nullptr, "send to a rank that is not a neighbour");
    bytes_ += data.size() * sizeof(float);
    return l->send(tag, std::move(data), std::move(complete));
  }
  Result<std::vector<float>> recv(int peer, Tag tag, Deadline deadline) override {
    Link* l = link(peer);
    CONTEND_CHECK(l != nullptr, "receive from a rank that is not a neighbour");
    return box_.take(peer, tag, deadline, l->name());
  }
  Result<void> flush() override {
    for (auto& [peer, l] : links_) {
      if (auto ok = l->flush(); !ok) {
        return ok;
      }
    }
    return {};
  }
  std::uint64_t bytes_sent() const override { return bytes_; }
  void abort(const std::string& why) override {
    for (auto& [peer, l] : links_) {
      l->fail(why);
    }
  }
  BufferPool& pool() { return pool_; }
  Link::Meter meter() {
    return [this](int peer, std::uint64_t bytes, double seconds, std::uint64_t tail_bytes, double tail_seconds) {
      record_transfer(peer, bytes, seconds, tail_bytes, tail_seconds);
    };
  }

  Mailbox box_;
  std::map<int, std::unique_ptr<Link>> links_;  // by neighbouring rank

 private:
  Link* link(int peer) {
    auto it = links_.find(peer);
    return it == links_.end() ? nullptr : it->second.get();
  }
  std::atomic<std::uint64_t> bytes_{0};
};

std::string peer_name(const TcpOptions& o, int r) {
  return "rank " + std::to_string(r) + " (" + o.peers[r] + ")";
}

Result<void> hello(int fd, const TcpOptions& o) {
  FrameHeader h;
  h.kind = kHello;
  h.iteration = static_cast<std::uint32_t>(o.rank);
  h.microbatch = static_cast<std::uint32_t>(o.world_size);
  return write_all(fd, &h, sizeof h);
}

// Reads a neighbour's greeting: the rank it is, one of `from`, in a world of the same size.
Result<int> expect_hello(int fd, const TcpOptions& o, const std::vector<int>& from) {
  FrameHeader h;
  auto got = read_all(fd, &h, sizeof h);
  if (!got || !*got || h.magic != kMagic || h.kind != kHello) {
    return make_error(Errc::kIo, "a peer of rank " + std::to_string(o.rank) + " did not greet as a contend worker");
  }
  const int rank = static_cast<int>(h.iteration);
  if (std::find(from.begin(), from.end(), rank) == from.end() || static_cast<int>(h.microbatch) != o.world_size) {
    std::string expected;
    for (int r : from) {
      expected += (expected.empty() ? "" : " or ") + std::to_string(r);
    }
    return make_error(Errc::kInvalidArgument, "expected rank " + expected + " of " + std::to_string(o.world_size) +
                                                  ", got rank " + std::to_string(h.iteration) + " of " +
                                                  std::to_string(h.microbatch) + ": check CONTEND_PEERS");
  }
  return rank;
}

// Whether this rank opens the connection to `peer` (else accepts it): the lower rank of a pair,
// but the last rank for the ring's pair (0, p-1).
bool connects_to(const TcpOptions& o, int peer) {
  const bool wrap = o.world_size > 2 && std::min(o.rank, peer) == 0 && std::max(o.rank, peer) == o.world_size - 1;
  return wrap ? o.rank == o.world_size - 1 : o.rank < peer;
}

// Accepts the neighbours in `from` on this rank's port (any address: each comes over the link it
// shares with this rank), identifying each by its greeting.
Result<std::map<int, Fd>> accept_peers(const TcpOptions& o, std::vector<int> from, Deadline deadline) {
  std::map<int, Fd> out;
  if (from.empty()) {
    return out;
  }
  auto addr = resolve(o.peers[o.rank]);
  if (!addr) {
    return addr.error();
  }
  addr->sin_addr.s_addr = htonl(INADDR_ANY);
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (auto ok = tune(listener.get(), o); !ok) {
    return ok.error();
  }
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) {
    return errno_error(errno, "bind port of " + o.peers[o.rank]);
  }
  if (::listen(listener.get(), 8) != 0) {
    return errno_error(errno, "listen " + o.peers[o.rank]);
  }
  while (out.size() < from.size()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      std::string missing;
      for (int r : from) {
        missing += out.count(r) != 0 ? "" : (missing.empty() ? "" : ", ") + peer_name(o, r);
      }
      return make_error(Errc::kTimeout, missing + " did not connect to " + o.peers[o.rank] + " within " +
                                            format_seconds(std::chrono::duration<double>(o.connect_timeout).count()));
    }
    pollfd p{listener.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200))) <= 0) {
      continue;
    }
    Fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) {
      continue;
    }
    auto peer = expect_hello(fd.get(), o, from);
    if (!peer) {
      return peer.error();
    }
    if (auto ok = hello(fd.get(), o); !ok) {
      return ok.error();
    }
    out[*peer] = std::move(fd);
  }
  return out;
}

Result<Fd> connect_peer(const TcpOptions& o, int peer, Deadline deadline) {
  const auto reach = o.reach.find(peer);
  const std::string& where = reach != o.reach.end() ? reach->second : o.peers[peer];
  auto addr = resolve(where);
  if (!addr) {
    return addr.error();
  }
  std::string last = "no attempt";
  while (std::chrono::steady_clock::now() < deadline) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (auto ok = tune(fd.get(), o); !ok) {
      return ok.error();
    }
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) == 0) {
      if (auto ok = hello(fd.get(), o); !ok) {
        return ok.error();
      }
      if (auto ok = expect_hello(fd.get(), o, {peer}); !ok) {
        return ok.error();
      }
      return fd;
    }
    last = std::strerror(errno);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return make_error(Errc::kTimeout, "could not connect to " + peer_name(o, peer) + " at " + where + " within " +
                                        format_seconds(std::chrono::duration<double>(o.connect_timeout).count()) +
                                        " (last attempt: " + last + ")");
}

}  // namespace

Result<std::pair<std::string, int>> parse_endpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return make_error(Errc::kInvalidArgument, "expected host:port, got \"" + text + "\"");
  }
  char* end = nullptr;
  const long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) {
    return make_error(Errc::kInvalidArgument, "expected a port 1-65535 in \"" + text + "\"");
  }
  return std::pair<std::string, int>(text.substr(0, colon), static_cast<int>(port));
}

Result<std::unique_ptr<Transport>> connect_tcp(const TcpOptions& o) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    return make_error(Errc::kInvalidArgument,
                      "rank " + std::to_string(o.rank) + " outside a world of " + std::to_string(o.world_size));
  }
  if (static_cast<int>(o.peers.size()) != o.world_size) {
    return make_error(Errc::kInvalidArgument, "the peer list has " + std::to_string(o.peers.size()) +
                                                  " entries for a world of " + std::to_string(o.world_size));
  }
  for (const auto& p : o.peers) {
    if (auto ok = resolve(p); !ok) {
      return ok.error();
    }
  }
  std::vector<int> neighbors = o.neighbors;
  if (neighbors.empty()) {
    for (int r : {o.rank - 1, o.rank + 1}) {
      if (r >= 0 && r < o.world_size) {
        neighbors.push_back(r);
      }
    }
  }
  std::vector<int> incoming;
  std::vector<int> outgoing;
  for (int n : neighbors) {
    CONTEND_CHECK(n >= 0 && n < o.world_size && n != o.rank, "connect_tcp: neighbour out of range");
    (connects_to(o, n) ? outgoing : incoming).push_back(n);
  }
  const Deadline deadline = std::chrono::steady_clock::now() + o.connect_timeout;
  // Accept on a helper thread while connecting out, so the pipeline comes up in one round whatever
  // order the workers start in.
  Result<std::map<int, Fd>> accepted = std::map<int, Fd>{};
  std::thread acceptor([&] { accepted = accept_peers(o, incoming, deadline); });
  std::map<int, Fd> connected;
  Result<void> outcome;
  for (int n : outgoing) {
    auto fd = connect_peer(o, n, deadline);
    if (!fd) {
      outcome = fd.error();
      break;
    }
    connected[n] = std::move(*fd);
  }
  acceptor.join();
  if (!outcome) {
    return outcome.error();
  }
  if (!accepted) {
    return accepted.error();
  }
  connected.merge(*accepted);
  auto t = std::make_unique<TcpTransport>();
  for (auto& [n, fd] : connected) {
    t->links_[n] = std::make_unique<Link>(std::move(fd), n, peer_name(o, n), t->box_, t->pool(), o.checksum, t->meter());
  }
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace contend::pipeline
