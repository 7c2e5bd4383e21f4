#include "contend/emulator/flow_engine.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "contend/common/fd.h"
#include "contend/emulator/netns.h"

namespace contend::emulator {
namespace {

using Clock = std::chrono::steady_clock;
double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

std::string bare(const std::string& cidr) {
  return cidr.substr(0, cidr.find('/'));
}

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
      return FlowEndpoints{src_ns, dst_ns, bare(l.from.background_address), bare(l.to.background_address), l.link};
    }
    if (l.to.node == flow.from && l.from.node == flow.to) {
      return FlowEndpoints{src_ns, dst_ns, bare(l.to.background_address), bare(l.from.background_address), l.link};
    }
  }
  std::string src_addr, dst_addr;
  for (const auto& p : plan.switch_ports) {
    if (p.node == flow.from) {
      src_addr = bare(p.address);
    }
    if (p.node == flow.to) {
      dst_addr = bare(p.address);
    }
  }
  return FlowEndpoints{src_ns, dst_ns, src_addr, dst_addr, "switch"};
}

struct FlowEngine::Flow {
  FlowSpec spec;
  FlowEndpoints ends;
  int port = 0;
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

  // Sink: accepts the streams (TCP) or binds (UDP) and counts what arrives.
  void run_sink(std::promise<Result<void>>& ready) {
    const std::string what = "flow " + spec.name + " sink in " + ends.dst_netns;
    auto ns = open_netns(ends.dst_netns);
    if (!ns || ::setns(ns->get(), CLONE_NEWNET) != 0) {
      ready.set_value(ns ? errno_error(errno, what + ": setns") : ns.error());
      return;
    }
    const bool tcp = spec.protocol == Protocol::kTcp;
    Fd listener(::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const int one = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const int rcvbuf = 8 << 20;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a = address(ends.dst_address, port);
    if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        (tcp && ::listen(listener.get(), 128) != 0)) {
      ready.set_value(errno_error(errno, what + ": bind " + ends.dst_address + ":" + std::to_string(port)));
      return;
    }
    Fd ep(::epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listener.get();
    ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, listener.get(), &ev);
    ready.set_value({});
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

  // Source: connects the streams from the background address and sends until stopped.
  void run_source(std::promise<Result<void>>& ready) {
    const std::string what = "flow " + spec.name + " source in " + ends.src_netns;
    auto ns = open_netns(ends.src_netns);
    if (!ns || ::setns(ns->get(), CLONE_NEWNET) != 0) {
      ready.set_value(ns ? errno_error(errno, what + ": setns") : ns.error());
      return;
    }
    const bool tcp = spec.protocol == Protocol::kTcp;
    std::vector<Fd> socks;
    for (int s = 0; s < spec.streams; ++s) {
      Fd fd(::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0));
      sockaddr_in local = address(ends.src_address, 0);
      if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
        ready.set_value(errno_error(errno, what + ": bind " + ends.src_address));
        return;
      }
      if (tcp) {
        if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_CONGESTION, spec.congestion.c_str(),
                         static_cast<socklen_t>(spec.congestion.size())) != 0) {
          ready.set_value(make_error(Errc::kInvalidArgument, what + ": congestion control \"" + spec.congestion +
                                                                 "\": " + std::strerror(errno)));
          return;
        }
        if (spec.rate_bps > 0) {
          const std::uint64_t pace = static_cast<std::uint64_t>(spec.rate_bps / 8.0 / spec.streams);
          ::setsockopt(fd.get(), SOL_SOCKET, SO_MAX_PACING_RATE, &pace, sizeof pace);
        }
      }
      sockaddr_in peer = address(ends.dst_address, port);
      if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&peer), sizeof peer) != 0) {
        ready.set_value(errno_error(errno, what + ": connect " + ends.dst_address + ":" + std::to_string(port)));
        return;
      }
      ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
      socks.push_back(std::move(fd));
    }
    ready.set_value({});
    if (tcp) {
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
    std::vector<char> msg(spec.message_bytes, 'c');
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
        } else if (errno == EAGAIN || errno == ENOBUFS) {
          break;  // the queue is full: try again at the next tick
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

Result<void> FlowEngine::start(const FlowSpec& spec) {
  auto ends = flow_endpoints(plan_, spec);
  if (!ends) {
    return ends.error();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& f : flows_) {
    if (f->spec.name == spec.name && f->running) {
      return make_error(Errc::kInvalidArgument, "flow " + spec.name + " is running already");
    }
  }
  auto flow = std::make_unique<Flow>();
  flow->spec = spec;
  flow->ends = *ends;
  flow->port = next_port_++;
  std::promise<Result<void>> sink_ready, source_ready;
  auto sink_done = sink_ready.get_future();
  Flow* f = flow.get();
  f->sink = std::thread([f, &sink_ready] { f->run_sink(sink_ready); });
  if (auto ok = sink_done.get(); !ok) {
    (void)f->join();
    return ok;
  }
  auto source_done = source_ready.get_future();
  f->source = std::thread([f, &source_ready] { f->run_source(source_ready); });
  if (auto ok = source_done.get(); !ok) {
    (void)f->join();
    return ok;
  }
  f->running = true;
  f->started_s = now_s();
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
