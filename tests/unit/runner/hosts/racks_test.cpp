#include "hosts/racks.h"

#include <catch2/catch.hpp>

#include "contend/runner/hosts/hosts.h"
#include "unit/runner/fixtures.h"

namespace contend::runner {
namespace {

// What `ansible-inventory --list` answers for racks `a` (x, y) and `b` (z, w) under `nodes`, the
// control node beside them.
const std::string kTwoRacks = R"({"_meta": {"hostvars": {}},
  "all": {"children": ["ungrouped", "nodes", "control"]},
  "control": {"hosts": ["localhost"]},
  "nodes": {"children": ["b", "a"]},
  "a": {"hosts": ["x", "y"]},
  "b": {"hosts": ["z", "w"]}})";

emulator::Scenario two_leaves(const std::string& placement) {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "f", "duration": "10s",
          "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "1Gbit"}},
          "placement": )" +
          placement + "}",
      "f.json", nullptr);
  REQUIRE(s.ok());
  return *s;
}

std::string racks_error(const std::string& text) {
  auto r = parse_racks(text, "inv.yml");
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("the inventory's racks are the groups under nodes, in its order, and stand for the leaves host by host",
          "[hosts]") {
  auto racks = parse_racks(kTwoRacks, "inv.yml");
  REQUIRE(racks.ok());
  CHECK(racks->names == std::vector<std::string>{"b", "a"});
  CHECK(racks->hosts == std::vector<std::vector<std::string>>{{"z", "w"}, {"x", "y"}});
  // Spread: one host from each leaf in turn, so the ranks run on the first host of each rack.
  const emulator::Scenario s = two_leaves(R"("spread")");
  auto hosts = hosts_on_racks(s, *racks, "inv.yml");
  REQUIRE(hosts.ok());
  CHECK(*hosts == std::map<std::string, std::string>{{"h0", "z"}, {"h1", "w"}, {"h2", "x"}, {"h3", "y"}});
  CHECK(hosts->at(s.nodes[0]) == "z");
  CHECK(hosts->at(s.nodes[1]) == "x");
  // Pack fills one leaf first: both ranks in one rack.
  const emulator::Scenario packed = two_leaves(R"("pack")");
  CHECK(hosts->at(packed.nodes[0]) == "z");
  CHECK(hosts->at(packed.nodes[1]) == "w");
}

TEST_CASE("an inventory whose racks cannot stand for the fabric's leaves is refused, naming them", "[hosts]") {
  CHECK_THAT(racks_error("{"), Catch::Contains("inv.yml"));
  CHECK_THAT(racks_error(R"({"all": {"children": ["ungrouped"]}})"), Catch::Contains("no group `nodes`"));
  CHECK_THAT(racks_error(R"({"nodes": {"hosts": ["x", "y"]}})"), Catch::Contains("`nodes` has none"));
  CHECK_THAT(racks_error(R"({"nodes": {"children": ["a"], "hosts": ["q"]}, "a": {"hosts": ["x"]}})"),
             Catch::Contains("host q is in `nodes` but in none of its groups"));
  CHECK_THAT(racks_error(R"({"nodes": {"children": ["a", "b"]}, "a": {"hosts": ["x"]}, "b": {"hosts": ["x"]}})"),
             Catch::Contains("host x is in two racks, a and b"));
  CHECK_THAT(racks_error(R"({"nodes": {"children": ["a", "b"]}, "a": {"hosts": ["x"]}})"),
             Catch::Contains("rack b (a group under `nodes`) has no hosts"));
  CHECK_THAT(racks_error(R"({"nodes": {"children": ["a"]}, "a": {"hosts": "x"}})"),
             Catch::Contains("group a's hosts: expected a list of names"));

  const emulator::Scenario s = two_leaves(R"("spread")");
  auto one_rack = parse_racks(R"({"nodes": {"children": ["a"]}, "a": {"hosts": ["x", "y"]}})", "inv.yml");
  REQUIRE(one_rack.ok());
  auto fewer = hosts_on_racks(s, *one_rack, "inv.yml");
  REQUIRE_FALSE(fewer.ok());
  CHECK_THAT(fewer.error().message, Catch::Contains("2 leaves") && Catch::Contains("which has 1"));
  auto short_rack =
      parse_racks(R"({"nodes": {"children": ["a", "b"]}, "a": {"hosts": ["x", "y"]}, "b": {"hosts": ["z"]}})", "inv");
  REQUIRE(short_rack.ok());
  auto uneven = hosts_on_racks(s, *short_rack, "inv");
  REQUIRE_FALSE(uneven.ok());
  CHECK_THAT(uneven.error().message,
             Catch::Contains("leaf leaf1 has 2 hosts, and rack b (inv), which stands for it, has 1"));
}

TEST_CASE("on cluster hosts a fabric scenario may change its hosts' link rates and nothing else", "[hosts]") {
  const std::string base =
      R"("workload": {"stages": 2, "microbatches": 4, "fwd": "5ms", "activation": "64KiB"}, "schedules": ["1f1b"],
         "repetitions": 1, "scenarios": [")";
  HostsOptions hosts{"/nonexistent/inventory.yml", "ansible", "/tmp", {}, {}};
  const auto refusal = [&](const std::string& timeline, const std::string& fabric) {
    test::TempFile scenario(R"({"schema": "contend.scenario/1", "name": "f", "duration": "10s", "fabric": )" + fabric +
                            R"(, "timeline": [)" + timeline + "]}");
    auto e = test::parse(base + scenario.name + R"("])");
    INFO((e.ok() ? "" : e.error().message));
    REQUIRE(e.ok());
    auto ok = place_on_racks(*e, hosts);
    REQUIRE_FALSE(ok.ok());
    return ok.error().message;
  };
  const std::string leaf_spine =
      R"({"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "1Gbit"}})";
  CHECK_THAT(refusal(R"({"at": "1s", "link": "leaf0-spine0", "rate": "100Mbit"})", leaf_spine),
             Catch::Contains("/timeline/0 changes the rate of leaf0-spine0, a link between switches"));
  CHECK_THAT(refusal(R"({"at": "1s", "link": "leaf0-spine0", "state": "down"})", leaf_spine),
             Catch::Contains("takes a link down or up"));
  CHECK_THAT(
      refusal(R"({"at": "1s", "flow": {"name": "bulk", "from": "h2", "to": "h3", "rate": "50Mbit"}})", leaf_spine),
      Catch::Contains("starts background traffic"));
  // A host with a NIC per rail: a cluster host shapes one interface.
  CHECK_THAT(refusal("", R"({"rail-optimized": {"hosts": 2, "rails": 2, "rate": "1Gbit"}})"),
             Catch::Contains("host h0 has 2 link(s) (h0-rail0, h0-rail1)"));
  // A host's NIC may change: the scenario passes, and the inventory is read next (here: none).
  CHECK_THAT(refusal(R"({"at": "1s", "link": "h0-leaf0", "rate": "100Mbit"})", leaf_spine),
             Catch::Contains("/nonexistent/inventory.yml: no such inventory"));
}

}  // namespace contend::runner
