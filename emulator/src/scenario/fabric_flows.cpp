#include "contend/emulator/scenario/fabric_flows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>

#include "contend/common/fnv.h"
#include "contend/common/overloaded.h"
#include "scenario/fabric_state.h"
#include "scenario/max_min.h"

namespace contend::emulator {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

using detail::CachedFlow;
using detail::FabricCache;
using detail::FabricState;
using detail::Stream;

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

  // How the paths `path` could give a stream from `from` to `to` cross link `link`: its NICs'
  // links every one; a link between switches, by how many of the equal-cost paths between their
  // switches it lies on.
  PathCrossing crossing(const std::string& from, const std::string& to, const std::string& link) {
    for (const Hop& h : next_[from]) {
      if (*h.to == to) {
        return s_.links[h.link].name == link ? PathCrossing::kEvery : PathCrossing::kNone;
      }
    }
    const Hop* out = first_nic(from, "");
    const Hop* in = out == nullptr ? nullptr : first_nic(to, *out->to);
    if (in == nullptr || st_.down.count(s_.links[out->link].name) != 0 ||
        st_.down.count(s_.links[in->link].name) != 0) {
      return PathCrossing::kNone;  // no path: a NIC's link is down, as path() finds
    }
    if (s_.links[out->link].name == link || s_.links[in->link].name == link) {
      return PathCrossing::kEvery;
    }
    const auto l = std::find_if(s_.links.begin(), s_.links.end(), [&](const LinkSpec& x) { return x.name == link; });
    if (l == s_.links.end() || !s_.is_switch(l->from) || !s_.is_switch(l->to) || st_.down.count(link) != 0) {
      return PathCrossing::kNone;
    }
    const std::string& a = *out->to;
    const std::string& b = *in->to;
    const auto to_a = paths_to(a);
    const auto to_b = paths_to(b);
    const auto total = to_b.find(a);
    if (total == to_b.end()) {
      return PathCrossing::kNone;
    }
    double through = 0;
    for (const auto& [u, v] : {std::pair{&l->from, &l->to}, std::pair{&l->to, &l->from}}) {
      const auto au = to_a.find(*u);
      const auto bv = to_b.find(*v);
      if (au != to_a.end() && bv != to_b.end() && au->second.first + 1 + bv->second.first == total->second.first) {
        through += au->second.second * bv->second.second;
      }
    }
    return through == 0                      ? PathCrossing::kNone
           : through >= total->second.second ? PathCrossing::kEvery
                                             : PathCrossing::kSome;
  }

 private:
  // Every switch's hops to switch `target` and how many shortest paths through switches it has
  // to it.
  std::map<std::string, std::pair<int, double>> paths_to(const std::string& target) {
    const std::map<std::string, int> hops = hops_from(s_, target, st_.down);
    std::vector<const std::string*> by_hops;
    for (const auto& [node, n] : hops) {
      if (s_.is_switch(node)) {
        by_hops.push_back(&node);
      }
    }
    std::stable_sort(by_hops.begin(), by_hops.end(),
                     [&](const std::string* x, const std::string* y) { return hops.at(*x) < hops.at(*y); });
    std::map<std::string, std::pair<int, double>> out;
    for (const std::string* node : by_hops) {
      const int n = hops.at(*node);
      double count = n == 0 ? 1 : 0;
      for (const Hop& h : next_[*node]) {
        const auto there = out.find(*h.to);
        if (there != out.end() && there->second.first == n - 1) {
          count += there->second.second;
        }
      }
      out[*node] = {n, count};
    }
    return out;
  }

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

// Flow f's entry in `cache`: found by where f is while its name is the entry's (a replay gives
// its flows from the same places call after call), else by its name.
CachedFlow& cached(FabricCache& cache, const FlowSpec& f) {
  CachedFlow*& at = cache.at[&f];
  if (at == nullptr || at->name != f.name) {
    at = &cache.flows[f.name];
    at->name = f.name;
  }
  return *at;
}

// Every stream of `flows` on its path, from `cache` while no link changed state, with its share
// at the cache's last prediction when the flow was in it unchanged (a stream's `flow`: its flow's
// place in `flows`; a flow no path joins has none). Returns what changed since that prediction:
// the ports of the streams gone.
detail::Change route(const Scenario& s, const FabricState& now, const std::vector<const FlowSpec*>& flows,
                     FabricCache& cache, std::vector<Stream>& streams) {
  detail::Change change;
  change.afresh = cache.down != now.down;
  if (change.afresh) {
    cache.flows.clear();
    cache.at.clear();
    cache.last.clear();
    cache.down = now.down;
  }
  const long before = cache.predictions++;
  const auto gone = [&](const CachedFlow& c) {
    for (std::size_t k = 0; k < std::min(c.rates.size(), c.paths.size()); ++k) {
      change.gone_ports.insert(change.gone_ports.end(), c.paths[k].begin(), c.paths[k].end());
    }
  };
  std::optional<Router> router;  // built on the first path the cache lacks
  std::vector<CachedFlow*> present;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& f = *flows[i];
    CachedFlow& c = cached(cache, f);
    for (int k = static_cast<int>(c.paths.size()); k < f.streams; ++k) {
      if (!router) {
        router.emplace(s, now);
      }
      c.paths.push_back(router->path(f, k));
    }
    const double cap = f.rate_bps > 0 ? f.rate_bps / f.streams : kUnlimited;
    const bool same = c.seen == before && c.cap_bps == cap && c.rates.size() == static_cast<std::size_t>(f.streams);
    if (c.seen == before && !same) {
      gone(c);  // started again, other than it was
    }
    const bool routable = std::none_of(c.paths.begin(), c.paths.begin() + f.streams,
                                       [](const std::vector<std::size_t>& p) { return p.empty(); });
    for (std::size_t k = 0; routable && k < static_cast<std::size_t>(f.streams); ++k) {
      streams.push_back({i, &c.paths[k], cap, same ? c.rates[k] : -1, same ? c.bottlenecks[k] : detail::kNoPort});
    }
    c.seen = before + 1;
    c.cap_bps = cap;
    present.push_back(&c);
  }
  for (const CachedFlow* c : cache.last) {
    if (c->seen == before) {
      gone(*c);
    }
  }
  cache.last = std::move(present);
  return change;
}

// Each stream's share kept in its flow's cache entry, for the next prediction.
void remember(const std::vector<Stream>& streams, const std::vector<CachedFlow*>& flows) {
  for (CachedFlow* c : flows) {
    c->rates.clear();
    c->bottlenecks.clear();
  }
  for (const Stream& st : streams) {
    CachedFlow& c = *flows[st.flow];
    c.rates.push_back(st.rate_bps);
    c.bottlenecks.push_back(st.bottleneck);
  }
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
                                 ++st.network;
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
                                 ++st.network;
                                 if (l.up) {
                                   st.down.erase(l.link);
                                 } else {
                                   st.down.insert(l.link);
                                 }
                                 return true;
                               }},
                    e.action);
}

namespace {

// The streams of `now`'s flows and `more`'s (in that order in `flows`), routed and shared.
std::vector<Stream> share(const Scenario& s, const FabricState& now, FabricCache& c,
                          const std::vector<const FlowSpec*>& more, std::vector<const FlowSpec*>& flows) {
  const bool reshaped = c.network != now.network || c.capacity.empty();
  if (reshaped) {
    c.capacity = capacities(s, now);
    c.network = now.network;
  }
  flows.reserve(now.flows.size() + more.size());
  for (const FlowSpec& f : now.flows) {
    flows.push_back(&f);
  }
  flows.insert(flows.end(), more.begin(), more.end());
  std::vector<Stream> streams;
  streams.reserve(2 * flows.size());
  detail::Change change = route(s, now, flows, c, streams);
  change.afresh = change.afresh || reshaped || !c.resume;
  detail::share_max_min(streams, c.capacity, change, c.sharing);
  remember(streams, c.last);
  return streams;
}

// Each of `count` flows' rate, its streams' together (0: none, no path joins its hosts).
std::vector<double> flow_rates(const std::vector<Stream>& streams, std::size_t count) {
  std::vector<double> out(count, 0);
  for (const Stream& st : streams) {
    out[st.flow] += st.rate_bps;
  }
  return out;
}

}  // namespace

FabricPrediction predict_state(const Scenario& s, const FabricState& now, double at_s, FabricCache* cache,
                               const std::vector<const FlowSpec*>& more, std::vector<double>* rates) {
  FabricCache fresh;
  FabricCache& c = cache != nullptr ? *cache : fresh;
  std::vector<const FlowSpec*> flows;
  const std::vector<Stream> streams = share(s, now, c, more, flows);
  if (rates != nullptr) {
    *rates = flow_rates(streams, flows.size());
  }
  FabricPrediction out;
  out.at_s = at_s;
  std::vector<bool> routed(flows.size(), false);
  for (const Stream& st : streams) {
    routed[st.flow] = true;
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& f = *flows[i];
    out.flows.push_back({f.name, f.from, f.to, f.streams, 0, {}, ""});
    if (!routed[i]) {
      out.unroutable.push_back(f.name);
    }
  }
  report(s, streams, c.capacity, cache == nullptr, c, out);
  return out;
}

std::vector<double> predict_rates(const Scenario& s, const FabricState& now, FabricCache& cache,
                                  const std::vector<const FlowSpec*>& more) {
  std::vector<const FlowSpec*> flows;
  const std::vector<Stream> streams = share(s, now, cache, more, flows);
  return flow_rates(streams, flows.size());
}

}  // namespace detail

PathCrossing paths_cross(const Scenario& s, const std::string& from, const std::string& to, const std::string& link) {
  FabricState now = detail::initial_state(s);
  for (auto e = s.events.begin(); e != s.events.end() && e->at_s <= 0; ++e) {
    detail::apply(now, *e);
  }
  return Router(s, now).crossing(from, to, link);
}

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
