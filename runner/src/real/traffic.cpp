#include "real/traffic.h"

#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"

namespace contend::runner {
namespace {

// The link joining nodes `x` and `y`, or nullptr.
const emulator::LinkSpec* link_between(const emulator::Scenario& s, const std::string& x, const std::string& y) {
  for (const auto& l : s.links) {
    if ((l.from == x && l.to == y) || (l.from == y && l.to == x)) {
      return &l;
    }
  }
  return nullptr;
}

// `node`'s address that `peer` reaches it at: on the link joining them, else on the switch.
std::string address_for(const emulator::TopologyPlan& plan, const std::string& node, const std::string& peer,
                        const std::string& link) {
  for (const auto& l : plan.links) {
    if (l.link == link) {
      return emulator::strip_prefix_length(l.from.node == node ? l.from.address : l.to.address);
    }
  }
  for (const auto& port : plan.switch_ports) {
    if (port.node == node) {
      return emulator::strip_prefix_length(port.address);
    }
  }
  CONTEND_CHECK(false, "no address of " + node + " for " + peer);
  return "";
}

}  // namespace

std::vector<RankPair> exchange_pairs(const emulator::Scenario& s, const pipeline::ScheduleChoice& schedule) {
  const schedule::Schedule& placed = schedule.lowered;
  std::vector<RankPair> out;
  for (int a = 0; a < placed.num_ranks; ++a) {
    for (int b : placed.peers_of(a)) {
      if (b > a) {
        const emulator::LinkSpec* link = link_between(s, s.nodes[a], s.nodes[b]);
        out.push_back({a, b, s.has_fabric() ? std::string(kFabricWay) : link != nullptr ? link->name : ""});
      }
    }
  }
  return out;
}

std::vector<std::string> unshaped_traffic(const Experiment& e) {
  std::vector<std::string> out;
  for (int sc = 0; sc < static_cast<int>(e.scenarios.size()); ++sc) {
    for (const ScheduleEntry& entry : e.schedules) {
      const Spec& schedule = entry.schedule.spec;
      for (const RankPair& p : exchange_pairs(e.scenarios[sc], entry.schedule)) {
        if (p.link.empty()) {
          const auto& nodes = e.scenarios[sc].nodes;
          out.push_back("scenario " + e.scenarios[sc].name + ", " + schedule.str() + ": ranks " + std::to_string(p.a) +
                        " and " + std::to_string(p.b) + " exchange tensors but no link joins " + nodes[p.a] + " and " +
                        nodes[p.b] + ": that traffic crosses the unshaped switch (add a link " + nodes[p.b] + "-" +
                        nodes[p.a] + " to shape it)");
        }
      }
    }
  }
  return out;
}

std::vector<std::vector<std::string>> reach_options(const std::vector<RankPair>& pairs,
                                                    const emulator::TopologyPlan& plan, int port) {
  std::vector<std::vector<std::string>> out(plan.nodes.size());
  for (const RankPair& p : pairs) {
    if (p.b == p.a + 1 || p.link == kFabricWay) {
      continue;  // chain neighbours, or a fabric: each rank's own address reaches its peer
    }
    const std::string& na = plan.nodes[p.a].first;
    const std::string& nb = plan.nodes[p.b].first;
    for (const auto& [from, to, node, peer] : {std::tuple{p.a, p.b, nb, na}, std::tuple{p.b, p.a, na, nb}}) {
      out[from].push_back("--reach");
      out[from].push_back(std::to_string(to) + "=" + address_for(plan, node, peer, p.link) + ":" +
                          std::to_string(port));
    }
  }
  return out;
}

}  // namespace contend::runner
