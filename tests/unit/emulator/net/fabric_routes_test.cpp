// A fabric's plan: switches are namespaces of their own, fabric ports hold no background address,
// and every namespace routes every host NIC through each neighbour on a shortest path (several:
// one multipath route, ECMP), never through a host.
#include <catch2/catch.hpp>
#include <set>

#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/net/topology.h"

using namespace contend;
using namespace contend::emulator;

namespace {

Scenario fabric(const std::string& kind_and_params) {
  const std::string text =
      R"({"schema": "contend.scenario/1", "name": "f", "duration": "10s", "fabric": {)" + kind_and_params + "}}";
  auto s = parse_scenario(text, "f.json", [](const std::string&) -> Result<std::string> { return std::string(); });
  REQUIRE(s.ok());
  return *s;
}

// The address (without its length) of `node`'s end of link `link`.
std::string address_of(const TopologyPlan& plan, const std::string& link, const std::string& node) {
  const LinkPlan* l = plan.find_link(link);
  REQUIRE(l != nullptr);
  return strip_prefix_length(l->from.node == node ? l->from.address : l->to.address);
}

// The interfaces the route to `destination` in `node`'s namespace leaves by, and how many routes
// there are to it (one, or none).
std::pair<std::set<std::string>, int> route(const TopologyPlan& plan, const std::string& node,
                                            const std::string& destination) {
  std::set<std::string> out;
  int routes = 0;
  for (const RoutePlan& r : plan.routes) {
    if (r.netns == node_netns(plan.run, node) && r.destination == destination + "/32") {
      ++routes;
      for (const NextHop& h : r.hops) {
        out.insert(h.ifname);
      }
    }
  }
  return {out, routes};
}

}  // namespace

TEST_CASE("leaf-spine routes: one hop up from a host, both spines from a leaf, one leaf down", "[fabric][topology]") {
  const Scenario s = fabric(R"("leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 2, "host_rate": "1Gbit"})");
  const TopologyPlan plan = plan_topology(s, "r");
  CHECK(plan.switches.size() == 4);
  CHECK(plan.namespaces().size() == 4 + 4 + 1);
  CHECK(plan.switches[0].second == "contend-r.spine0");
  for (const LinkPlan& l : plan.links) {
    CHECK(l.from.background_address.empty());
    CHECK(l.to.background_address.empty());
  }
  const std::string h3 = address_of(plan, "h3-leaf1", "h3");
  const std::string h1 = address_of(plan, "h1-leaf0", "h1");
  const LinkPlan* up0 = plan.find_link("leaf0-spine0");
  const LinkPlan* up1 = plan.find_link("leaf0-spine1");
  CHECK(route(plan, "h0", h3) == std::pair{std::set<std::string>{plan.find_link("h0-leaf0")->from.ifname}, 1});
  CHECK(route(plan, "leaf0", h3) == std::pair{std::set<std::string>{up0->from.ifname, up1->from.ifname}, 1});
  CHECK(route(plan, "spine1", h3) == std::pair{std::set<std::string>{plan.find_link("leaf1-spine1")->to.ifname}, 1});
  CHECK(route(plan, "h0", h1).second == 1);     // through leaf0 alone
  CHECK(route(plan, "leaf0", h1).second == 0);  // connected
  CHECK(route(plan, "h3", h3).second == 0);     // its own
  // The next hop is the neighbour's address on the link.
  for (const RoutePlan& r : plan.routes) {
    if (r.netns == "contend-r.leaf0" && r.destination == h3 + "/32") {
      CHECK(r.hops[0].via == strip_prefix_length(up0->to.address));
    }
  }
}

TEST_CASE("fat-tree routes: k/2 ways up from an edge and an aggregation switch, one way down", "[fabric][topology]") {
  const Scenario s = fabric(R"("fat-tree": {"k": 4, "rate": "1Gbit"})");
  const TopologyPlan plan = plan_topology(s, "r");
  const std::string far = address_of(plan, "h15-e3_1", "h15");  // pod 3
  CHECK(route(plan, "e0_0", far).first.size() == 2);
  CHECK(route(plan, "a0_1", far).first.size() == 2);
  CHECK(route(plan, "c3", far).first.size() == 1);
  CHECK(route(plan, "a3_0", far).first.size() == 1);
  CHECK(route(plan, "h0", far).first.size() == 1);
  // Inside a pod, two ways up to the aggregation layer and straight down.
  const std::string near = address_of(plan, "h3-e0_1", "h3");
  CHECK(route(plan, "e0_0", near).first.size() == 2);
  CHECK(route(plan, "c0", near).first.size() == 1);
}

TEST_CASE("rail-optimized routes stay on the rail, and flows between hosts cross the fabric", "[fabric][topology]") {
  const Scenario s = fabric(R"("rail-optimized": {"hosts": 3, "rails": 2, "rate": "1Gbit"})");
  const TopologyPlan plan = plan_topology(s, "r");
  const std::string h1_rail1 = address_of(plan, "h1-rail1", "h1");
  CHECK(route(plan, "h0", h1_rail1) == std::pair{std::set<std::string>{plan.find_link("h0-rail1")->from.ifname}, 1});
  FlowSpec flow;
  flow.name = "x";
  flow.from = "h0";
  flow.to = "h2";
  auto ends = flow_endpoints(plan, flow);
  REQUIRE(ends.ok());
  CHECK(ends->via == "fabric");
  CHECK(ends->src_address == address_of(plan, "h0-rail0", "h0"));
  CHECK(ends->dst_address == address_of(plan, "h2-rail0", "h2"));  // the same rail
}

TEST_CASE("a fabric larger than one machine parses, for predictions, and is refused to emu up", "[fabric][topology]") {
  const Scenario big =
      fabric(R"("leaf-spine": {"leaves": 9, "hosts_per_leaf": 32, "spines": 4, "host_rate": "1Gbit"})");
  CHECK(big.nodes.size() == 288);
  const auto fits = fits_one_machine(big);
  REQUIRE_FALSE(fits.ok());
  CHECK_THAT(fits.error().message, Catch::Contains("288 hosts and 13 switches; one machine holds at most 250 hosts"));
  CHECK(fits_one_machine(fabric(R"("fat-tree": {"k": 4, "rate": "1Gbit"})")).ok());
}

TEST_CASE("a chain keeps its plan: no switches, background addresses, no fabric routes", "[fabric][topology]") {
  Scenario s;
  s.nodes = {"n0", "n1", "n2"};
  s.links.push_back({"a", "n0", "n1", 1e9});
  s.links.push_back({"b", "n1", "n2", 1e9});
  const TopologyPlan plan = plan_topology(s, "r");
  CHECK(plan.switches.empty());
  CHECK(plan.links[1].to.background_address == "198.19.0.6/32");
  for (const RoutePlan& r : plan.routes) {
    CHECK(r.hops.size() == 1);
  }
  CHECK(plan.routes.size() == 2 * 2 + 2);  // every end its peer's background; n0 and n2 one beyond
}
