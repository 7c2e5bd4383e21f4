#include "net/fabric_routes.h"

namespace contend::emulator::detail {

bool fabric_link(const Scenario& s, const LinkSpec& l) {
  return s.is_switch(l.from) || s.is_switch(l.to);
}

namespace {

// The next hops from `self` toward a destination `hops` away (by hops_from of the switch it hangs
// on): every link from `self` to a switch one hop nearer.
std::vector<NextHop> nearer(const Scenario& s, const TopologyPlan& plan, const std::map<std::string, int>& hops,
                            const std::string& self, const std::set<std::string>& down) {
  std::vector<NextHop> out;
  const int here = hops.at(self);
  for (std::size_t i = 0; i < plan.links.size(); ++i) {
    const LinkPlan& l = plan.links[i];
    if (down.count(l.link) != 0) {
      continue;
    }
    for (const auto& [near, far] : {std::pair{&l.from, &l.to}, std::pair{&l.to, &l.from}}) {
      const auto it = hops.find(far->node);
      if (near->node == self && s.is_switch(far->node) && it != hops.end() && it->second == here - 1) {
        out.push_back({strip_prefix_length(far->address), near->ifname});
      }
    }
  }
  return out;
}

}  // namespace

std::vector<RoutePlan> fabric_routes(const Scenario& s, const TopologyPlan& plan, const std::set<std::string>& down) {
  std::map<std::string, std::string> netns;  // every node's and switch's, by name
  for (const auto* group : {&plan.nodes, &plan.switches}) {
    for (const auto& [name, ns] : *group) {
      netns[name] = ns;
    }
  }
  std::vector<RoutePlan> out;
  for (const LinkPlan& l : plan.links) {
    const InterfacePlan* host = s.is_switch(l.from.node) ? &l.to : &l.from;
    const InterfacePlan* attach = host == &l.from ? &l.to : &l.from;
    if (s.is_switch(host->node) || !s.is_switch(attach->node) || down.count(l.link) != 0) {
      continue;  // switch to switch, or host to host: no host address to route through the fabric
    }
    const auto hops = hops_from(s, attach->node, down);
    for (const auto& [name, ns] : netns) {
      if (name == host->node || name == attach->node || hops.count(name) == 0) {
        continue;
      }
      if (auto via = nearer(s, plan, hops, name, down); !via.empty()) {
        out.push_back({ns, strip_prefix_length(host->address) + "/32", std::move(via), ""});
      }
    }
  }
  return out;
}

}  // namespace contend::emulator::detail
