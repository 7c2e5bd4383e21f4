#include "flows/flow.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <system_error>

#include "contend/emulator/flows/flow_pacer.h"
#include "contend/emulator/net/netns.h"
#include "flows/flow_udp.h"
#include "threads.h"

namespace contend::emulator {

double flow_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A thread's start-up result, set once: by its body when it is ready (or failed to be), or by the
// guard around the body when the body threw first.
class Ready {
 public:
  std::future<Result<void>> future() { return promise_.get_future(); }
  void set(Result<void> result) {
    if (!set_) {
      set_ = true;
      promise_.set_value(std::move(result));
    }
  }

 private:
  std::promise<Result<void>> promise_;
  bool set_ = false;
};

namespace {

using Clock = std::chrono::steady_clock;

// A TCP source writes min(message size, this) at a time, from one buffer it reuses: on a byte
// stream a larger message is the same bytes in more writes, and a flow's memory does not grow
// with it.
constexpr std::size_t kWriteBytes = 256 * 1024;

// A sink's receive buffer. TCP: SO_RCVBUF (net.core.rmem_max caps it). UDP: SO_RCVBUFFORCE where
// the process may (root), else SO_RCVBUF: a datagram that finds the buffer full is lost, and a
// GSO source hands the sink 64 KB at a time.
constexpr int kSinkBufferBytes = 8 << 20;

void size_receive_buffer(int fd) {
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kSinkBufferBytes, sizeof kSinkBufferBytes) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kSinkBufferBytes, sizeof kSinkBufferBytes);
  }
}

sockaddr_in address(const std::string& ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

}  // namespace

void FlowEngine::Flow::set_error(const std::string& e) {
  std::lock_guard<std::mutex> lock(error_mutex);
  if (error.empty()) {
    error = e;
  }
}

void FlowEngine::Flow::set_send_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(error_mutex);
  send_path = path;
}

double FlowEngine::Flow::join() {
  stop_source = true;
  if (source.joinable()) {
    source.join();
  }
  const double source_stopped = flow_clock_s();
  // A moment for the last bytes in flight to reach the sink's counters.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop_sink = true;
  if (sink.joinable()) {
    sink.join();
  }
  return source_stopped;
}

Result<void> FlowEngine::Flow::launch(std::thread& thread, void (Flow::*body)(Ready&)) {
  Ready ready;
  auto done = ready.future();
  try {
    thread = std::thread([this, body, ready = std::move(ready)]() mutable {
      try {
        (this->*body)(ready);
      } catch (...) {
        const Error e = detail::current_exception_error("flow " + spec.name);
        set_error(e.message);
        ready.set(e);
      }
    });
  } catch (const std::system_error& e) {
    return make_error(Errc::kIo, "flow " + spec.name + ": starting a thread: " + e.what());
  }
  auto ok = done.get();
  if (!ok) {
    (void)join();
  }
  return ok;
}

void FlowEngine::Flow::run_sink(Ready& ready) {
  const std::string what = "flow " + spec.name + " sink" + (ends.dst_netns.empty() ? "" : " in " + ends.dst_netns);
  if (auto ok = enter_netns(ends.dst_netns); !ok) {
    ready.set(with_context(ok.error(), what));
    return;
  }
  const bool tcp = spec.protocol == Protocol::kTcp;
  Fd listener(::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (tcp) {
    ::setsockopt(listener.get(), SOL_SOCKET, SO_RCVBUF, &kSinkBufferBytes, sizeof kSinkBufferBytes);
  } else {
    size_receive_buffer(listener.get());
    // UDP GRO: GSO buffers from the source arrive whole (one receive per buffer, not per datagram)
    // where the kernel has it; without it every datagram is its own receive.
    ::setsockopt(listener.get(), SOL_UDP, UDP_GRO, &one, sizeof one);
  }
  sockaddr_in a = address(ends.dst_address.empty() ? "0.0.0.0" : ends.dst_address, port);
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      (tcp && ::listen(listener.get(), 128) != 0)) {
    ready.set(errno_error(
        errno, what + ": bind " + (ends.dst_address.empty() ? "*" : ends.dst_address) + ":" + std::to_string(port)));
    return;
  }
  Fd ep(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listener.get();
  ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, listener.get(), &ev);
  ready.set({});
  std::vector<Fd> streams;
  std::vector<char> buf(1 << 20);
  epoll_event events[64];
  while (!stop_sink.load()) {
    const int n = ::epoll_wait(ep.get(), events, 64, 50);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (tcp && fd == listener.get()) {
        Fd s(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (s.valid()) {
          epoll_event e{};
          e.events = EPOLLIN;
          e.data.fd = s.get();
          ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s.get(), &e);
          streams.push_back(std::move(s));
        }
        continue;
      }
      for (;;) {
        const ssize_t r = ::recv(fd, buf.data(), buf.size(), 0);
        if (r > 0) {
          received += static_cast<std::uint64_t>(r);
          continue;
        }
        if (r == 0) {
          ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr);
        }
        break;
      }
    }
  }
}

Result<Fd> FlowEngine::Flow::connect_stream(const std::string& what) {
  const bool tcp = spec.protocol == Protocol::kTcp;
  const auto deadline = Clock::now() + std::chrono::duration<double>(connect_timeout_s);
  for (;;) {
    Fd fd(::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0));
    if (!ends.src_address.empty()) {
      sockaddr_in local = address(ends.src_address, 0);
      if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
        return errno_error(errno, what + ": bind " + ends.src_address);
      }
    }
    if (tcp) {
      if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_CONGESTION, spec.congestion.c_str(),
                       static_cast<socklen_t>(spec.congestion.size())) != 0) {
        return make_error(Errc::kInvalidArgument,
                          what + ": congestion control \"" + spec.congestion + "\": " + std::strerror(errno));
      }
      if (spec.rate_bps > 0) {
        const std::uint64_t pace = static_cast<std::uint64_t>(spec.rate_bps / 8.0 / spec.streams);
        ::setsockopt(fd.get(), SOL_SOCKET, SO_MAX_PACING_RATE, &pace, sizeof pace);
      }
    }
    sockaddr_in peer = address(ends.dst_address, port);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&peer), sizeof peer) == 0) {
      ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
      return fd;
    }
    const int err = errno;
    const bool not_up_yet = err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH || err == ETIMEDOUT;
    if (!not_up_yet || Clock::now() >= deadline || stop_source.load()) {
      return errno_error(err, what + ": connect " + ends.dst_address + ":" + std::to_string(port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void FlowEngine::Flow::run_source(Ready& ready) {
  const std::string what = "flow " + spec.name + " source" + (ends.src_netns.empty() ? "" : " in " + ends.src_netns);
  if (auto ok = enter_netns(ends.src_netns); !ok) {
    ready.set(with_context(ok.error(), what));
    return;
  }
  std::vector<Fd> socks;
  for (int s = 0; s < spec.streams; ++s) {
    auto fd = connect_stream(what);
    if (!fd) {
      ready.set(fd.error());
      return;
    }
    socks.push_back(std::move(*fd));
  }
  ready.set({});
  if (spec.protocol == Protocol::kTcp) {
    tcp_loop(socks);
  } else {
    udp_loop(socks);
  }
}

void FlowEngine::Flow::tcp_loop(std::vector<Fd>& socks) {
  Fd ep(::epoll_create1(EPOLL_CLOEXEC));
  for (auto& s : socks) {
    epoll_event e{};
    e.events = EPOLLOUT;
    e.data.fd = s.get();
    ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s.get(), &e);
  }
  const std::vector<char> msg(std::min<std::uint64_t>(spec.message_bytes, kWriteBytes), 'c');
  epoll_event events[128];
  while (!stop_source.load()) {
    const int n = ::epoll_wait(ep.get(), events, 128, 50);
    for (int i = 0; i < n; ++i) {
      const ssize_t w = ::send(events[i].data.fd, msg.data(), msg.size(), MSG_NOSIGNAL);
      if (w > 0) {
        sent += static_cast<std::uint64_t>(w);
      } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        set_error(std::string("send: ") + std::strerror(errno));
        return;
      }
    }
  }
}

void FlowEngine::Flow::udp_loop(std::vector<Fd>& socks) {
  const std::size_t size = std::min<std::size_t>(spec.message_bytes, 1472);
  UdpBatchSender sender(socks, size, spec.rate_bps);
  set_send_path(sender.path());
  const auto start = Clock::now();
  const auto now_s = [&start] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  TokenBucket bucket = udp_bucket(sender.plan(), spec.rate_bps, 0.0);
  while (!stop_source.load()) {
    bucket.refill(now_s());
    const std::size_t datagrams = sender.plan().batch_datagrams;
    const double bytes = static_cast<double>(datagrams * size);
    if (!bucket.take(bytes)) {
      // Until the batch is due; at most 50 ms, so a slow flow still sees its stop in time.
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(bucket.wait_s(bytes), 0.05)));
      continue;
    }
    const bool gso = sender.gso();
    auto got = sender.send(datagrams);
    if (gso != sender.gso()) {
      set_send_path(sender.path());  // the device refused GSO buffers: the summary says so
    }
    if (!got) {
      set_error(got.error().message);
      return;
    }
    sent += *got;
    if (static_cast<double>(*got) < bytes) {
      bucket.give_back(bytes - static_cast<double>(*got));
      if (*got == 0) {
        // The queue is full, or (hosts mode) the sink's host is not listening yet and an ICMP
        // port-unreachable came back: try again shortly.
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  }
}

}  // namespace contend::emulator
