#include "contend/emulator/scenario/fabric_flows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contend/common/fnv.h"
#include "contend/common/overloaded.h"
#include "scenario/fabric_state.h"

namespace contend::emulator {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

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
  std::vector<std::size_t> ports;
  double cap_bps;  // the flow's pacing share, or unlimited
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
        for (std::size_t p : st.ports) {
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
      for (std::size_t p : st.ports) {
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
      for (std::size_t p : st->ports) {
        used[p] += level;
      }
    }
    left -= frozen_now.size();
    if (!std::isfinite(level)) {
      break;  // only unshaped ports and unpaced streams left
    }
  }
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

FabricPrediction predict_state(const Scenario& s, const FabricState& now, double at_s) {
  FabricPrediction out;
  out.at_s = at_s;
  std::vector<double> capacity(2 * s.links.size());
  for (std::size_t i = 0; i < s.links.size(); ++i) {
    const LinkSpec& l = s.links[i];
    const double goodput = now.down.count(l.name) != 0 ? 0 : kFabricGoodput * now.rate_bps.at(l.name);
    capacity[2 * i] = l.direction == Direction::kBackward ? kUnlimited : goodput;
    capacity[2 * i + 1] = l.direction == Direction::kForward ? kUnlimited : goodput;
  }
  Router router(s, now);
  std::vector<Stream> streams;
  for (const FlowSpec& f : now.flows) {
    for (int k = 0; k < f.streams; ++k) {
      auto ports = router.path(f, k);
      if (ports.empty()) {
        out.unroutable.push_back(f.name);
        break;
      }
      streams.push_back({out.flows.size(), std::move(ports), f.rate_bps > 0 ? f.rate_bps / f.streams : kUnlimited});
    }
    out.flows.push_back({f.name, f.from, f.to, f.streams, 0, {}, ""});
  }
  share_max_min(streams, capacity);
  const auto port_name = [&](std::size_t p) {
    const LinkSpec& l = s.links[p / 2];
    return l.name + "@" + (p % 2 == 0 ? l.from : l.to);
  };
  for (std::size_t p = 0; p < capacity.size(); ++p) {
    out.ports[port_name(p)].capacity_bps = capacity[p];
  }
  for (const Stream& st : streams) {
    PredictedFlow& f = out.flows[st.flow];
    f.rate_bps += st.rate_bps;
    for (std::size_t p : st.ports) {
      PortLoad& load = out.ports[port_name(p)];
      load.load_bps += st.rate_bps;
      ++load.streams;
      if (std::find(f.ports.begin(), f.ports.end(), port_name(p)) == f.ports.end()) {
        f.ports.push_back(port_name(p));
      }
    }
    if (st.bottleneck < capacity.size() && (f.bottleneck.empty() || st.rate_bps <= f.rate_bps)) {
      f.bottleneck = port_name(st.bottleneck);
    }
  }
  std::erase_if(out.flows, [&](const PredictedFlow& f) {
    return std::find(out.unroutable.begin(), out.unroutable.end(), f.name) != out.unroutable.end();
  });
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
