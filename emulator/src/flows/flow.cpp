#include "flows/flow.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <system_error>
#include <type_traits>

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

Result<std::unique_ptr<Socket>> FlowEngine::Flow::open_sink(const std::string& what) {
  auto local = Endpoint::make(ends.dst_address, port);
  if (!local) {
    return with_context(local.error(), what);
  }
  if (spec.protocol == Protocol::kTcp) {
    auto s = TcpSocket::open(what);
    if (!s) {
      return s.error();
    }
    auto ok = first_error(s->set_nonblocking(), s->set_receive_buffer(kSinkBufferBytes));
    if (ok) {
      return *ok;
    }
    if (auto listening = s->listen_on(*local); !listening) {
      return listening.error();
    }
    return std::unique_ptr<Socket>(std::make_unique<TcpSocket>(std::move(*s)));
  }
  auto s = UdpSocket::open(what);
  if (!s) {
    return s.error();
  }
  if (auto ok = first_error(s->set_nonblocking(), s->set_receive_buffer(kSinkBufferBytes)); ok) {
    return *ok;
  }
  // UDP GRO: GSO buffers from the source arrive whole (one receive per buffer, not per datagram)
  // where the kernel has it; without it every datagram is its own receive.
  (void)s->set_receive_offload();
  if (auto ok = s->set_option(SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR"); !ok) {
    return ok.error();
  }
  if (auto bound = s->bind(*local); !bound) {
    return bound.error();
  }
  return std::unique_ptr<Socket>(std::make_unique<UdpSocket>(std::move(*s)));
}

void FlowEngine::Flow::run_sink(Ready& ready) {
  const std::string what = "flow " + spec.name + " sink" + (ends.dst_netns.empty() ? "" : " in " + ends.dst_netns);
  if (auto ok = enter_netns(ends.dst_netns); !ok) {
    ready.set(with_context(ok.error(), what));
    return;
  }
  auto socket = open_sink(what);
  if (!socket) {
    ready.set(socket.error());
    return;
  }
  Fd ep(::epoll_create1(EPOLL_CLOEXEC));
  const auto watch = [&ep](Socket& s) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.ptr = &s;
    return ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s.fd(), &e) == 0;
  };
  if (!ep.valid() || !watch(**socket)) {
    ready.set(errno_error(errno, what + ": epoll"));
    return;
  }
  ready.set({});
  drain(**socket, ep, watch);
}

void FlowEngine::Flow::drain(Socket& socket, const Fd& ep, const std::function<bool(Socket&)>& watch) {
  auto* listener = spec.protocol == Protocol::kTcp ? static_cast<TcpSocket*>(&socket) : nullptr;
  std::deque<TcpSocket> streams;
  std::vector<char> buf(1 << 20);
  epoll_event events[64];
  while (!stop_sink.load()) {
    const int n = ::epoll_wait(ep.get(), events, 64, 50);
    for (int i = 0; i < n; ++i) {
      auto* s = static_cast<Socket*>(events[i].data.ptr);
      if (s == listener) {
        auto accepted = listener->accept(std::chrono::milliseconds(0), socket.name() + " stream");
        if (accepted && *accepted && (*accepted)->set_nonblocking()) {
          streams.push_back(std::move(**accepted));
          (void)watch(streams.back());
        }
        continue;
      }
      for (;;) {
        auto got = s->recv_some(buf.data(), buf.size());
        if (!got || !*got || **got == 0) {
          if (!got || (*got && **got == 0)) {
            ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, s->fd(), nullptr);
          }
          break;
        }
        received += **got;
        if (job) {
          job->received(job_slot, static_cast<std::uint64_t>(**got), flow_clock_s());
        }
      }
    }
  }
}

template <typename S>
Result<S> FlowEngine::Flow::connect_stream(const std::string& what) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(connect_timeout_s);
  auto to = Endpoint::make(ends.dst_address, port);
  if (!to) {
    return with_context(to.error(), what);
  }
  for (;;) {
    auto s = open_stream<S>(what);
    if (!s) {
      return s.error();
    }
    auto connected = s->connect(*to);
    if (connected) {
      if (auto ok = s->set_nonblocking(); !ok) {
        return ok.error();
      }
      return s;
    }
    if (!peer_not_up(connected.error()) || Clock::now() >= deadline || stop_source.load()) {
      return connected.error();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

template <typename S>
Result<S> FlowEngine::Flow::open_stream(const std::string& what) {
  auto s = S::open(what);
  if (!s) {
    return s.error();
  }
  if (!ends.src_address.empty()) {
    auto local = Endpoint::make(ends.src_address, 0);
    if (!local) {
      return with_context(local.error(), what);
    }
    if (auto ok = s->bind(*local); !ok) {
      return ok.error();
    }
  }
  if constexpr (std::is_same_v<S, TcpSocket>) {
    if (auto ok = s->set_congestion(spec.congestion); !ok) {
      return ok.error();
    }
    if (spec.rate_bps > 0) {
      if (auto ok = s->set_pacing_rate(static_cast<std::uint64_t>(spec.rate_bps / 8.0 / spec.streams)); !ok) {
        return ok.error();
      }
    }
  }
  return s;
}

void FlowEngine::Flow::run_source(Ready& ready) {
  const std::string what = "flow " + spec.name + " source" + (ends.src_netns.empty() ? "" : " in " + ends.src_netns);
  if (auto ok = enter_netns(ends.src_netns); !ok) {
    ready.set(with_context(ok.error(), what));
    return;
  }
  if (spec.protocol == Protocol::kTcp) {
    auto socks = connect_streams<TcpSocket>(what);
    ready.set(socks ? Result<void>() : Result<void>(socks.error()));
    if (socks) {
      tcp_loop(*socks);
    }
    return;
  }
  auto socks = connect_streams<UdpSocket>(what);
  ready.set(socks ? Result<void>() : Result<void>(socks.error()));
  if (socks) {
    udp_loop(*socks);
  }
}

template <typename S>
Result<std::vector<S>> FlowEngine::Flow::connect_streams(const std::string& what) {
  std::vector<S> socks;
  for (int i = 0; i < spec.streams; ++i) {
    auto s = connect_stream<S>(what);
    if (!s) {
      return s.error();
    }
    socks.push_back(std::move(*s));
  }
  return socks;
}

void FlowEngine::Flow::tcp_loop(std::vector<TcpSocket>& socks) {
  Fd ep(::epoll_create1(EPOLL_CLOEXEC));
  for (auto& s : socks) {
    epoll_event e{};
    e.events = EPOLLOUT;
    e.data.ptr = &s;
    ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s.fd(), &e);
  }
  if (job) {
    iterate(ep);
  } else {
    (void)tcp_send(ep, UINT64_MAX);
  }
}

bool FlowEngine::Flow::tcp_send(const Fd& ep, std::uint64_t bytes) {
  const std::vector<char> msg(std::min<std::uint64_t>(spec.message_bytes, kWriteBytes), 'c');
  epoll_event events[128];
  std::uint64_t left = bytes;
  while (left > 0) {
    if (stop_source.load()) {
      return false;
    }
    const int n = ::epoll_wait(ep.get(), events, 128, 50);
    for (int i = 0; i < n && left > 0; ++i) {
      const std::size_t size = std::min<std::uint64_t>(msg.size(), left);
      auto w = static_cast<TcpSocket*>(events[i].data.ptr)->send_some(msg.data(), size);
      if (!w) {
        set_error(w.error().message);
        return false;
      }
      sent += *w;
      left -= bytes == UINT64_MAX ? 0 : *w;
    }
  }
  return true;
}

void FlowEngine::Flow::iterate(const Fd& ep) {
  for (;;) {
    const std::uint64_t i = job->current();
    const double now = flow_clock_s();
    // A slotted job's iterations after the first wait for its next slot.
    const double wait = spec.iterate_period_s > 0 && i > 0 ? job->next_slot_s(now, spec.iterate_period_s) - now : 0;
    if (!pause(wait) || !pause(spec.iterate_compute_s) || !tcp_send(ep, spec.iterate_bytes) ||
        !job->wait_end(i, stop_source)) {
      return;
    }
  }
}

bool FlowEngine::Flow::pause(double s) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  while (Clock::now() < until) {
    if (stop_source.load()) {
      return false;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
  }
  return !stop_source.load();
}

void FlowEngine::Flow::udp_loop(std::vector<UdpSocket>& socks) {
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
