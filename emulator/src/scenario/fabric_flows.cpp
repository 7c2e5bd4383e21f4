#include "contend/emulator/scenario/fabric_flows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "contend/common/fnv.h"
#include "contend/common/overloaded.h"
#include "scenario/fabric_state.h"

namespace contend::emulator {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

using detail::FabricCache;
using detail::FabricState;

// Ports are numbered 2 i (link i's from-end egress) and 2 i + 1 (its to-end's).
class Router {
 public:
  Router(const Scenario& s, const FabricState& st) : s_(s), st_(st) {
    for (std::size_t i = 0; i < s.links.size(); ++i) {
      const LinkSpec& l = s.links[i];
      for (auto* hops : {&links_, &next_}) {
        if (hops == &links_ || st.down.count(l.name) == 0) {
          (*hops)[l.from].push_back({i, &l.to, 2 * i});
          (*hops)[l.to].push_back({i, &l.from, 2 * i + 1});
        }
      }
    }
  }

  // The ports stream `stream` of `f` crosses; empty when no path joins its hosts.
  std::vector<std::size_t> path(const FlowSpec& f, int stream) {
    for (const Hop& h : next_[f.from]) {
      if (*h.to == f.to) {
        return {h.port};  // a link joins them
      }
    }
    const Hop* out = first_nic(f.from, "");
    const Hop* in = out == nullptr ? nullptr : first_nic(f.to, *out->to);
    if (in == nullptr || st_.down.count(s_.links[out->link].name) != 0 ||
        st_.down.count(s_.links[in->link].name) != 0) {
      return {};  // the flow's addresses are on a NIC whose link is down
    }
    const std::string& target = *in->to;  // the switch the destination's NIC hangs on
    auto cached = hops_.find(target);
    if (cached == hops_.end()) {
      cached = hops_.emplace(target, hops_from(s_, target, st_.down)).first;
    }
    const auto& hops = cached->second;
    std::vector<std::size_t> ports{out->port};
    for (const std::string* at = out->to; *at != target;) {
      const auto here = hops.find(*at);
      std::vector<const Hop*> nearer;
      for (const Hop& h : next_[*at]) {
        const auto there = hops.find(*h.to);
        if (s_.is_switch(*h.to) && here != hops.end() && there != hops.end() && there->second == here->second - 1) {
          nearer.push_back(&h);
        }
      }
      if (nearer.empty()) {
        return {};
      }
      const std::uint64_t hash = fnv1a(f.name + "#" + std::to_string(stream) + "@" + *at);
      const Hop* pick = nearer[hash % nearer.size()];
      ports.push_back(pick->port);
      at = pick->to;
    }
    // The destination's NIC seen from its switch: the same link, the other way.
    ports.push_back(in->port ^ 1u);
    return ports;
  }

 private:
  struct Hop {
    std::size_t link;
    const std::string* to;
    std::size_t port;  // the egress onto the link, toward `to`
  };
  // `host`'s NIC onto switch `prefer` when it has one, else its first, up or down: the flow
  // engine picks a flow's addresses from the topology alone (flow_engine.cpp, fabric_endpoints).
  const Hop* first_nic(const std::string& host, const std::string& prefer) {
    const Hop* first = nullptr;
    for (const Hop& h : links_[host]) {
      if (s_.is_switch(*h.to)) {
        if (*h.to == prefer) {
          return &h;
        }
        first = first == nullptr ? &h : first;
      }
    }
    return first;
  }

  const Scenario& s_;
  const FabricState& st_;
  std::map<std::string, std::vector<Hop>> links_;           // every link of each host or switch
  std::map<std::string, std::vector<Hop>> next_;            // its links that are up
  std::map<std::string, std::map<std::string, int>> hops_;  // by target switch
};

struct Stream {
  std::size_t flow;
  const std::vector<std::size_t>* ports;  // its path, held by the cache
  double cap_bps;                         // the flow's pacing share, or unlimited
  double rate_bps = 0;
  bool frozen = false;
  std::size_t bottleneck = std::numeric_limits<std::size_t>::max();
};

// Progressive filling: every unfrozen stream's rate rises together until a port is full (its
// streams freeze there) or a stream reaches its cap.
void share_max_min(std::vector<Stream>& streams, const std::vector<double>& capacity) {
  std::vector<double> used(capacity.size(), 0);
  for (std::size_t left = streams.size(); left > 0;) {
    std::vector<int> active(capacity.size(), 0);
    std::vector<const Stream*> frozen_now;
    double level = kUnlimited;
    for (const Stream& st : streams) {
      if (!st.frozen) {
        level = std::min(level, st.cap_bps);
        for (std::size_t p : *st.ports) {
          ++active[p];
        }
      }
    }
    for (std::size_t p = 0; p < capacity.size(); ++p) {
      if (active[p] > 0) {
        level = std::min(level, (capacity[p] - used[p]) / active[p]);
      }
    }
    for (Stream& st : streams) {
      if (st.frozen) {
        continue;
      }
      st.rate_bps = level;
      for (std::size_t p : *st.ports) {
        if ((capacity[p] - used[p]) / active[p] <= level * (1 + 1e-12)) {
          st.bottleneck = std::min(st.bottleneck, p);
        }
      }
      if (st.bottleneck != std::numeric_limits<std::size_t>::max() || st.cap_bps <= level) {
        st.frozen = true;
        frozen_now.push_back(&st);
      }
    }
    for (const Stream* st : frozen_now) {
      for (std::size_t p : *st->ports) {
        used[p] += level;
      }
    }
    left -= frozen_now.size();
    if (!std::isfinite(level)) {
      break;  // only unshaped ports and unpaced streams left
    }
  }
}

// The goodput each port carries in `now` (0: its link is down; unlimited: not shaped that way).
std::vector<double> capacities(const Scenario& s, const FabricState& now) {
  std::vector<double> capacity(2 * s.links.size());
  for (std::size_t i = 0; i < s.links.size(); ++i) {
    const LinkSpec& l = s.links[i];
    const double goodput = now.down.count(l.name) != 0 ? 0 : kFabricGoodput * now.rate_bps.at(l.name);
    capacity[2 * i] = l.direction == Direction::kBackward ? kUnlimited : goodput;
    capacity[2 * i + 1] = l.direction == Direction::kForward ? kUnlimited : goodput;
  }
  return capacity;
}

// Every stream of `now`'s flows on its path, from `cache` while no link changed state; each flow
// (routable or not) in `out`, the ones no path joins in its `unroutable` too.
std::vector<Stream> route(const Scenario& s, const FabricState& now, FabricCache& cache, FabricPrediction& out) {
  if (cache.down != now.down) {
    cache.paths.clear();
    cache.down = now.down;
  }
  std::optional<Router> router;  // built on the first path the cache lacks
  std::vector<Stream> streams;
  for (const FlowSpec& f : now.flows) {
    auto& paths = cache.paths[f.name];
    for (int k = static_cast<int>(paths.size()); k < f.streams; ++k) {
      if (!router) {
        router.emplace(s, now);
      }
      paths.push_back(router->path(f, k));
    }
    const bool routable = std::none_of(paths.begin(), paths.begin() + f.streams,
                                       [](const std::vector<std::size_t>& p) { return p.empty(); });
    for (int k = 0; routable && k < f.streams; ++k) {
      streams.push_back({out.flows.size(), &paths[static_cast<std::size_t>(k)],
                         f.rate_bps > 0 ? f.rate_bps / f.streams : kUnlimited});
    }
    if (!routable) {
      out.unroutable.push_back(f.name);
    }
    out.flows.push_back({f.name, f.from, f.to, f.streams, 0, {}, ""});
  }
  return streams;
}

const std::string& port_name(const Scenario& s, FabricCache& cache, std::size_t p) {
  if (cache.port_names.empty()) {
    for (const LinkSpec& l : s.links) {
      cache.port_names.push_back(l.name + "@" + l.from);
      cache.port_names.push_back(l.name + "@" + l.to);
    }
  }
  return cache.port_names[p];
}

// The flows' rates, ports and bottlenecks and the ports' loads from the shared `streams`: every
// port when `all_ports`, else those a stream crosses.
void report(const Scenario& s, const std::vector<Stream>& streams, const std::vector<double>& capacity, bool all_ports,
            FabricCache& cache, FabricPrediction& out) {
  if (cache.rates_only) {
    for (const Stream& st : streams) {
      out.flows[st.flow].rate_bps += st.rate_bps;
    }
    return;  // unroutable flows stay, at rate 0
  }
  for (std::size_t p = 0; all_ports && p < capacity.size(); ++p) {
    out.ports[port_name(s, cache, p)].capacity_bps = capacity[p];
  }
  std::vector<std::vector<std::size_t>> crossed(out.flows.size());
  for (const Stream& st : streams) {
    PredictedFlow& f = out.flows[st.flow];
    f.rate_bps += st.rate_bps;
    for (std::size_t p : *st.ports) {
      PortLoad& load = out.ports[port_name(s, cache, p)];
      load.capacity_bps = capacity[p];
      load.load_bps += st.rate_bps;
      ++load.streams;
      auto& seen = crossed[st.flow];
      if (std::find(seen.begin(), seen.end(), p) == seen.end()) {
        seen.push_back(p);
        f.ports.push_back(port_name(s, cache, p));
      }
    }
    if (st.bottleneck < capacity.size() && (f.bottleneck.empty() || st.rate_bps <= f.rate_bps)) {
      f.bottleneck = port_name(s, cache, st.bottleneck);
    }
  }
  std::erase_if(out.flows, [&](const PredictedFlow& f) {
    return std::find(out.unroutable.begin(), out.unroutable.end(), f.name) != out.unroutable.end();
  });
}

}  // namespace

namespace detail {

FabricState initial_state(const Scenario& s) {
  FabricState st;
  for (const LinkSpec& l : s.links) {
    st.rate_bps[l.name] = l.rate_bps;
  }
  return st;
}

bool apply(FabricState& st, const Event& e) {
  const auto stop = [&](const std::string& name) {
    std::erase_if(st.flows, [&](const FlowSpec& f) { return f.name == name; });
  };
  return std::visit(Overloaded{[&](const SetRate& r) {
                                 st.rate_bps[r.link] = r.rate_bps;
                                 return true;
                               },
                               [](const SetStall&) { return false; },
                               [&](const FlowStart& f) {
                                 stop(f.flow.name);
                                 st.flows.push_back(f.flow);
                                 return true;
                               },
                               [&](const FlowStop& f) {
                                 stop(f.flow.name);
                                 return true;
                               },
                               [&](const SetLinkState& l) {
                                 if (l.up) {
                                   st.down.erase(l.link);
                                 } else {
                                   st.down.insert(l.link);
                                 }
                                 return true;
                               }},
                    e.action);
}

FabricPrediction predict_state(const Scenario& s, const FabricState& now, double at_s, FabricCache* cache) {
  FabricCache fresh;
  FabricPrediction out;
  out.at_s = at_s;
  const std::vector<double> capacity = capacities(s, now);
  std::vector<Stream> streams = route(s, now, cache != nullptr ? *cache : fresh, out);
  share_max_min(streams, capacity);
  report(s, streams, capacity, cache == nullptr, cache != nullptr ? *cache : fresh, out);
  return out;
}

}  // namespace detail

FabricPrediction predict_flows(const Scenario& s, double at_s) {
  FabricState now = detail::initial_state(s);
  for (const Event& e : s.events) {
    if (e.at_s > at_s) {
      break;
    }
    detail::apply(now, e);
  }
  return detail::predict_state(s, now, at_s);
}

}  // namespace contend::emulator
