#include "contend/emulator/net/network.h"

#include <algorithm>
#include <set>

#include "contend/emulator/net/discipline_registry.h"
#include "net/fabric_routes.h"
#include "net/rtnl.h"
#include "net/tc.h"

namespace contend::emulator {
namespace {

// The shaped ends of a planned link, in order (from, to).
std::vector<const InterfacePlan*> shaped_ends(const LinkPlan& l) {
  std::vector<const InterfacePlan*> out;
  if (l.shape_from) {
    out.push_back(&l.from);
  }
  if (l.shape_to) {
    out.push_back(&l.to);
  }
  return out;
}

Result<NlSocket> socket_for(const std::string& netns) {
  auto fd = open_netns(netns);
  if (!fd) {
    return fd.error();
  }
  return open_route_socket_in(*fd);
}

// What each discipline the links use needs of the kernel, asked once each before anything is built.
Result<void> probe_disciplines(const Scenario& scenario) {
  std::set<std::string> asked;
  for (const LinkSpec& l : scenario.links) {
    const DisciplineItem* d = find_discipline(l.qdisc);
    if (d != nullptr && d->kind.probe != nullptr && asked.insert(l.qdisc).second) {
      if (auto ok = d->kind.probe(); !ok) {
        return with_context(ok.error(), "link " + l.name + " (qdisc " + l.qdisc + ")");
      }
    }
  }
  return {};
}

}  // namespace

Result<Network> Network::create(const Scenario& scenario, TopologyPlan plan, const std::atomic<bool>* cancel) {
  if (scenario.needs_netem()) {
    if (auto ok = probe_netem(); !ok) {
      return with_context(ok.error(), scenario.source);
    }
  }
  if (auto ok = probe_disciplines(scenario); !ok) {
    return with_context(ok.error(), scenario.source);
  }
  Network net;
  net.plan_ = std::move(plan);
  auto topology = Topology::create(net.plan_, cancel);
  if (!topology) {
    return topology.error();
  }
  net.topology_.emplace(std::move(*topology));
  auto ok = net.shape(scenario, [](NlSocket sock, const LinkSpec& spec, const InterfacePlan& end) {
    return Shaper::install(std::move(sock), end.ifname, spec, strip_prefix_length(end.background_address));
  });
  if (!ok) {
    return ok.error();
  }
  return net;
}

Result<Network> Network::attach(const Scenario& scenario, TopologyPlan plan) {
  Network net;
  net.plan_ = std::move(plan);
  auto ok = net.shape(scenario, [](NlSocket sock, const LinkSpec& spec, const InterfacePlan& end) {
    return Shaper::attach(std::move(sock), end.ifname, spec);
  });
  if (!ok) {
    return ok.error();
  }
  return net;
}

Result<void> Network::shape(
    const Scenario& scenario,
    const std::function<Result<Shaper>(NlSocket, const LinkSpec&, const InterfacePlan&)>& make) {
  layout_.nodes = scenario.nodes;
  layout_.switches = scenario.switches;
  layout_.links = scenario.links;
  for (const LinkSpec& spec : scenario.links) {
    const LinkPlan& l = *plan_.find_link(spec.name);
    for (const InterfacePlan* end : shaped_ends(l)) {
      auto sock = socket_for(end->netns);
      if (!sock) {
        return sock.error();
      }
      auto shaper = make(std::move(*sock), spec, *end);
      if (!shaper) {
        return with_context(shaper.error(), end->netns);
      }
      ends_[spec.name].push_back({end->node, end->netns, std::move(*shaper)});
    }
  }
  return {};
}

Result<void> Network::set_rate(const std::string& link, double rate_bps) {
  auto it = ends_.find(link);
  if (it == ends_.end()) {
    return make_error(Errc::kNotFound, "no link " + link + " in run " + plan_.run);
  }
  for (ShapedEnd& end : it->second) {
    if (auto ok = end.shaper.set_rate(rate_bps); !ok) {
      return ok;
    }
  }
  return {};
}

Result<std::vector<LinkSample>> Network::sample() {
  std::map<std::string, detail::QdiscDump> qdiscs;  // by namespace, one dump each this round
  std::vector<LinkSample> out;
  for (auto& [link, ends] : ends_) {
    for (ShapedEnd& end : ends) {
      auto dump = qdiscs.find(end.netns);
      if (dump == qdiscs.end()) {
        auto sock = socket_in(end.netns);
        auto fresh = sock ? detail::QdiscDump::of(*sock) : Result<detail::QdiscDump>(sock.error());
        if (!fresh) {
          return with_context(fresh.error(), end.netns);
        }
        dump = qdiscs.emplace(end.netns, std::move(*fresh)).first;
      }
      auto stats = end.shaper.stats(dump->second.get());
      if (!stats) {
        return stats.error();
      }
      for (ClassStats& s : *stats) {
        out.push_back({link, end.node, std::move(s)});
      }
    }
  }
  return out;
}

Result<nl_sock*> Network::socket_in(const std::string& netns) {
  auto it = sockets_.find(netns);
  if (it == sockets_.end()) {
    auto sock = socket_for(netns);
    if (!sock) {
      return sock.error();
    }
    it = sockets_.emplace(netns, std::move(*sock)).first;
  }
  return it->second.get();
}

Result<void> Network::set_link_state(const std::string& link, bool up) {
  const LinkPlan* l = plan_.find_link(link);
  if (l == nullptr) {
    return make_error(Errc::kNotFound, "no link " + link + " in run " + plan_.run);
  }
  for (const InterfacePlan* end : {&l->from, &l->to}) {
    auto sock = socket_in(end->netns);
    if (!sock) {
      return sock.error();
    }
    if (auto ok = detail::set_link_state(*sock, end->ifname, up); !ok) {
      return with_context(ok.error(), end->netns);
    }
  }
  const std::set<std::string> was_down = down_;
  if (up) {
    down_.erase(link);
  } else {
    down_.insert(link);
  }
  return layout_.has_fabric() ? reroute(was_down) : Result<void>();
}

Result<void> Network::reroute(const std::set<std::string>& was_down) {
  using Key = std::pair<std::string, std::string>;  // (netns, destination)
  std::map<Key, RoutePlan> before, after;
  const std::set<std::string>& now_down = down_;
  for (auto& [routes, down] : {std::pair{&before, &was_down}, std::pair{&after, &now_down}}) {
    for (RoutePlan& r : detail::fabric_routes(layout_, plan_, *down)) {
      routes->emplace(Key{r.netns, r.destination}, std::move(r));
    }
  }
  const auto same = [](const RoutePlan& a, const RoutePlan& b) {
    return a.hops.size() == b.hops.size() &&
           std::equal(a.hops.begin(), a.hops.end(), b.hops.begin(),
                      [](auto& x, auto& y) { return x.via == y.via && x.ifname == y.ifname; });
  };
  for (const auto& [key, r] : after) {
    auto was = before.find(key);
    if (was != before.end() && same(was->second, r)) {
      continue;
    }
    auto sock = socket_in(key.first);
    if (auto ok = sock ? detail::add_route(*sock, r, true) : Result<void>(sock.error()); !ok) {
      return with_context(ok.error(), key.first);
    }
  }
  for (const auto& [key, r] : before) {
    if (after.count(key) == 0) {
      auto sock = socket_in(key.first);
      if (auto ok = sock ? detail::delete_route(*sock, key.second) : Result<void>(sock.error()); !ok) {
        return with_context(ok.error(), key.first);
      }
    }
  }
  return {};
}

void Network::release() {
  for (auto& [link, ends] : ends_) {
    for (ShapedEnd& end : ends) {
      end.shaper.release();
    }
  }
  if (topology_) {
    topology_->release();
  }
}

}  // namespace contend::emulator
