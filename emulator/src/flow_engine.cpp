#include "contend/emulator/flow_engine.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <system_error>
#include <thread>

#include "contend/common/fd.h"
#include "contend/emulator/netns.h"
#include "threads.h"

namespace contend::emulator {
namespace {

using Clock = std::chrono::steady_clock;
double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// A TCP source writes min(message size, this) at a time, from one buffer it reuses: on a byte
// stream a larger message is the same bytes in more writes, and a flow's memory does not grow
// with it.
constexpr std::size_t kWriteBytes = 256 * 1024;

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

sockaddr_in address(const std::string& ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

}  // namespace

Result<FlowEndpoints> flow_endpoints(const TopologyPlan& plan, const FlowSpec& flow) {
  std::string src_ns, dst_ns;
  for (const auto& [node, ns] : plan.nodes) {
    if (node == flow.from) {
      src_ns = ns;
    }
    if (node == flow.to) {
      dst_ns = ns;
    }
  }
  if (src_ns.empty() || dst_ns.empty()) {
    return make_error(Errc::kNotFound,
                      "flow " + flow.name + ": unknown node " + (src_ns.empty() ? flow.from : flow.to));
  }
  for (const auto& l : plan.links) {
    if (l.from.node == flow.from && l.to.node == flow.to) {
      return FlowEndpoints{src_ns, dst_ns, strip_prefix_length(l.from.background_address),
                           strip_prefix_length(l.to.background_address), l.link};
    }
    if (l.to.node == flow.from && l.from.node == flow.to) {
      return FlowEndpoints{src_ns, dst_ns, strip_prefix_length(l.to.background_address),
                           strip_prefix_length(l.from.background_address), l.link};
    }
  }
  std::string src_addr, dst_addr;
  for (const auto& p : plan.switch_ports) {
    if (p.node == flow.from) {
      src_addr = strip_prefix_length(p.address);
    }
    if (p.node == flow.to) {
      dst_addr = strip_prefix_length(p.address);
    }
  }
  return FlowEndpoints{src_ns, dst_ns, src_addr, dst_addr, "switch"};
}

struct FlowEngine::Flow {
  FlowSpec spec;
  FlowEndpoints ends;
  int port = 0;
  double connect_timeout_s = 0;
  std::atomic<bool> stop_source{false};  // the source stops first, so the sink sees all it sent
  std::atomic<bool> stop_sink{false};
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> sent{0};
  double started_s = 0;
  double stopped_s = 0;
  bool running = false;
  std::mutex error_mutex;
  std::string error;
  std::thread sink;
  std::thread source;

  void set_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (error.empty()) {
      error = e;
    }
  }

  // Stops the flow; returns when its source stopped sending (the end of its active time).
  double join() {
    stop_source = true;
    if (source.joinable()) {
      source.join();
    }
    const double source_stopped = now_s();
    // A moment for the last bytes in flight to reach the sink's counters.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop_sink = true;
    if (sink.joinable()) {
      sink.join();
    }
    return source_stopped;
  }

  // Runs `body` (run_sink or run_source) on `thread` and waits until it is ready; on failure
  // stops the flow and returns why. The thread owns `ready`: destroying it here while the thread
  // is still inside set_value would be a race. An exception in the body becomes the flow's error
  // (and the start's, when it came before the body was ready): none leaves the thread.
  Result<void> launch(std::thread& thread, void (Flow::*body)(Ready&)) {
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

  // Sink: accepts the streams (TCP) or binds (UDP) and counts what arrives.
  void run_sink(Ready& ready) {
    const std::string what = "flow " + spec.name + " sink" + (ends.dst_netns.empty() ? "" : " in " + ends.dst_netns);
    if (auto ok = enter_netns(ends.dst_netns); !ok) {
      ready.set(with_context(ok.error(), what));
      return;
    }
    const bool tcp = spec.protocol == Protocol::kTcp;
    Fd listener(::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const int one = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const int rcvbuf = 8 << 20;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
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

  // One stream of the source: a socket bound to the source address (when there is one), with its
  // congestion control and pacing, connected to the sink; retried until connect_timeout_s while
  // the sink is not up yet (hosts mode: another host's clock).
  Result<Fd> connect_stream(const std::string& what) {
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

  // Source: connects the streams and sends until stopped.
  void run_source(Ready& ready) {
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

  void tcp_loop(std::vector<Fd>& socks) {
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

  // Paced datagrams: every millisecond, the bytes the rate allows since the start.
  void udp_loop(std::vector<Fd>& socks) {
    const std::size_t size = std::min<std::size_t>(spec.message_bytes, 1472);
    std::vector<char> msg(size, 'u');
    const auto start = Clock::now();
    std::size_t next = 0;
    while (!stop_source.load()) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const double due = spec.rate_bps / 8.0 * elapsed;
      while (static_cast<double>(sent.load()) + static_cast<double>(size) <= due && !stop_source.load()) {
        const ssize_t w = ::send(socks[next].get(), msg.data(), size, MSG_NOSIGNAL);
        next = (next + 1) % socks.size();
        if (w > 0) {
          sent += static_cast<std::uint64_t>(w);
        } else if (errno == EAGAIN || errno == ENOBUFS || errno == ECONNREFUSED) {
          // The queue is full, or (hosts mode) the sink's host is not listening yet and an ICMP
          // port-unreachable came back: try again at the next tick.
          break;
        } else {
          set_error(std::string("send: ") + std::strerror(errno));
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }
};

FlowEngine::FlowEngine(TopologyPlan plan) : plan_(std::move(plan)) {}

FlowEngine::~FlowEngine() {
  stop_all();
}

Result<std::unique_ptr<FlowEngine>> FlowEngine::for_host(const Scenario& scenario, HostFlowPlan plan) {
  std::unique_ptr<FlowEngine> engine(new FlowEngine());
  std::map<std::string, const FlowSpec*> flows;  // by name: the first start of each
  for (const Event& e : scenario.events) {
    if (e.kind == Event::Kind::kFlowStart) {
      flows.try_emplace(e.flow.name, &e.flow);
    }
  }
  for (const auto& [name, spec] : flows) {
    engine->host_flow_names_.push_back(name);
    if (spec->from == plan.node && plan.addresses.count(spec->to) == 0) {
      return make_error(Errc::kInvalidArgument, "flow " + name + ": no address for node \"" + spec->to +
                                                    "\" (give --peer " + spec->to + "=ADDRESS)");
    }
  }
  engine->host_ = std::move(plan);
  const HostFlowPlan& host = *engine->host_;
  for (const auto& [name, spec] : flows) {
    if (spec->to != host.node || spec->from == host.node) {
      continue;
    }
    FlowEndpoints ends{"", host.netns, "", host.address, "host " + spec->from + "->" + spec->to};
    if (auto ok = engine->start_flow(*spec, ends, engine->host_port(name), true, false); !ok) {
      return ok.error();
    }
  }
  return engine;
}

int FlowEngine::host_port(const std::string& flow) const {
  const auto it = std::lower_bound(host_flow_names_.begin(), host_flow_names_.end(), flow);
  return host_->base_port + static_cast<int>(it - host_flow_names_.begin());
}

bool FlowEngine::source_here(const FlowSpec& flow) const {
  return !host_ || flow.from == host_->node;
}

Result<void> FlowEngine::start(const FlowSpec& spec) {
  if (!host_) {
    auto ends = flow_endpoints(plan_, spec);
    if (!ends) {
      return ends.error();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return start_flow(spec, *ends, next_port_++, true, true);
  }
  if (!source_here(spec)) {
    return {};  // the host it leaves starts it; this host's sink (if it reaches here) listens
  }
  const auto to = host_->addresses.find(spec.to);
  if (to == host_->addresses.end() ||
      !std::binary_search(host_flow_names_.begin(), host_flow_names_.end(), spec.name)) {
    return make_error(Errc::kInvalidArgument, "flow " + spec.name + ": not a flow of this host's scenario");
  }
  FlowEndpoints ends{host_->netns, "", host_->address, to->second, "host " + spec.from + "->" + spec.to};
  std::lock_guard<std::mutex> lock(mutex_);
  return start_flow(spec, ends, host_port(spec.name), false, true);  // its sink is the other host's
}

// Starts the sink and/or the source of one flow; the caller holds mutex_ (or owns the engine alone).
Result<void> FlowEngine::start_flow(const FlowSpec& spec, FlowEndpoints ends, int port, bool sink, bool source) {
  for (const auto& f : flows_) {
    if (f->spec.name == spec.name && f->running) {
      return make_error(Errc::kInvalidArgument, "flow " + spec.name + " is running already");
    }
  }
  auto flow = std::make_unique<Flow>();
  flow->spec = spec;
  flow->ends = std::move(ends);
  flow->port = port;
  flow->connect_timeout_s = host_ ? host_->connect_timeout_s : 0;
  Flow* f = flow.get();
  if (sink) {
    if (auto ok = f->launch(f->sink, &Flow::run_sink); !ok) {
      return ok;
    }
  }
  if (source) {
    if (auto ok = f->launch(f->source, &Flow::run_source); !ok) {
      return ok;
    }
    f->running = true;
    f->started_s = now_s();
  }
  flows_.push_back(std::move(flow));
  return {};
}

Result<void> FlowEngine::stop(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& f : flows_) {
    if (f->spec.name == name && f->running) {
      f->stopped_s = f->join();
      f->running = false;
      return {};
    }
  }
  return make_error(Errc::kNotFound, "no running flow " + name);
}

void FlowEngine::stop_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& f : flows_) {
    if (f->running) {
      f->stopped_s = f->join();
      f->running = false;
    } else if (f->sink.joinable()) {
      (void)f->join();  // a hosts-mode sink: listening since the start
    }
  }
}

std::vector<FlowStats> FlowEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, FlowStats> by_name;
  const double now = now_s();
  for (const auto& f : flows_) {
    auto [it, fresh] = by_name.try_emplace(f->spec.name);
    FlowStats& s = it->second;
    if (fresh) {
      s.name = f->spec.name;
      s.protocol = f->spec.protocol;
      s.streams = f->spec.streams;
      s.target_bps = f->spec.rate_bps;
      s.via = f->ends.via;
    }
    s.running = s.running || f->running;
    s.bytes_received += f->received.load();
    s.bytes_sent += f->sent.load();
    s.active_s += (f->running ? now : f->stopped_s) - f->started_s;
    std::lock_guard<std::mutex> e(f->error_mutex);
    if (!f->error.empty()) {
      s.error = f->error;
    }
  }
  std::vector<FlowStats> out;
  for (auto& [name, s] : by_name) {
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace contend::emulator
