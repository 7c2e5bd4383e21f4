#include <catch2/catch.hpp>

#include "contend/runner/truth/network.h"

using namespace contend;
using namespace contend::runner;

namespace {

// 2 leaves of 3 hosts at 200 Mbit/s under one spine at 300 Mbit/s (2:1), the ranks placed as
// `placement` says, and another tenant's flow h0 -> h3 from 2 s to 6 s.
emulator::Scenario leaf_spine(const std::string& placement) {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "10s",
          "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 3, "spines": 1,
                                    "host_rate": "200Mbit", "uplink_rate": "300Mbit"}},
          "placement": )" +
          placement + R"(,
          "timeline": [{"at": "2s", "flow": {"name": "other", "from": "h0", "to": "h3", "duration": "4s"}}]})",
      "t.json", nullptr);
  REQUIRE(s.ok());
  return *s;
}

}  // namespace

TEST_CASE("ranks packed into a leaf see their host ports alone, whatever crosses the uplinks", "[runner]") {
  emulator::Scenario s = leaf_spine(R"(["h1", "h2"])");
  REQUIRE(s.rank_hosts() == 2);
  auto net = scenario_network(s);
  REQUIRE(net.ok());
  REQUIRE(net->links.count({0, 1}) == 1);
  for (const double t : {1.0, 3.0, 7.0}) {
    CHECK(net->links.at({0, 1}).rate_at(t) == Approx(0.956 * 200e6));
    CHECK(back_links(*net).at({0, 1}).rate_at(t) == Approx(0.956 * 200e6));
  }
}

TEST_CASE("ranks spread across leaves share the uplink max-min with others' streams", "[runner]") {
  emulator::Scenario s = leaf_spine(R"(["h1", "h4"])");  // leaf0, leaf1
  auto net = scenario_network(s);
  REQUIRE(net.ok());
  // Alone on leaf0's 300 Mbit/s uplink, rank 0 -> 1 is held by the hosts' 200 Mbit/s ports.
  CHECK(net->links.at({0, 1}).rate_at(1) == Approx(0.956 * 200e6));
  // From 2 s to 6 s the other tenant's flow takes half of the uplink; then gives it back.
  CHECK(net->links.at({0, 1}).rate_at(3) == Approx(0.956 * 150e6));
  CHECK(net->links.at({0, 1}).rate_at(7) == Approx(0.956 * 200e6));
  // The other way crosses leaf1's uplink, which the flow leaves alone.
  CHECK(back_links(*net).at({0, 1}).rate_at(3) == Approx(0.956 * 200e6));
}

TEST_CASE("the pipeline's transfers are modelled apart: a rank's sends to its neighbours alternate", "[runner]") {
  emulator::Scenario s = leaf_spine(R"(["h1", "h4", "h2"])");  // leaf0, leaf1, leaf0
  auto net = scenario_network(s);
  REQUIRE(net.ok());
  // Rank 1 sends to ranks 0 and 2 through its one NIC: each transfer as if alone on it.
  CHECK(back_links(*net).at({0, 1}).rate_at(1) == Approx(0.956 * 200e6));
  CHECK(net->links.at({1, 2}).rate_at(1) == Approx(0.956 * 200e6));
  // The first and last ranks (a looped schedule's pair) both hang on leaf0.
  REQUIRE(net->links.count({0, 2}) == 1);
  CHECK(net->links.at({0, 2}).rate_at(1) == Approx(0.956 * 200e6));
  // The other tenant's flow (h0 -> h3, 2 s to 6 s) shares leaf0's uplink with rank 2 -> 1 only.
  CHECK(back_links(*net).at({1, 2}).rate_at(3) == Approx(0.956 * 150e6));
  CHECK(net->links.at({0, 2}).rate_at(3) == Approx(0.956 * 200e6));
}

TEST_CASE("an uplink that three ways cross holds as many at once as fit at their rates", "[runner]") {
  // 2 leaves of 3 hosts at 200 Mbit/s under one spine at 400 Mbit/s; ranks alternate leaves, so
  // leaf0's uplink carries 0 -> 1, 2 -> 1 and 2 -> 3: two of them fit at 200 Mbit/s, not three.
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "10s",
          "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 3, "spines": 1,
                                    "host_rate": "200Mbit", "uplink_rate": "400Mbit"}},
          "placement": ["h0", "h3", "h1", "h4"]})",
      "t.json", nullptr);
  REQUIRE(s.ok());
  auto net = scenario_network(*s);
  REQUIRE(net.ok());
  const auto& ports = net->shared_ports;
  REQUIRE(ports.count({0, 1}) == 1);
  REQUIRE(ports.count({2, 3}) == 1);
  // The uplink up and the spine's port down to leaf1 are the ports 0 -> 1 and 2 -> 3 both hold;
  // rank 1's NIC (1 -> 0, 1 -> 2) holds one.
  std::vector<int> both;
  for (int p : ports.at({0, 1})) {
    if (std::find(ports.at({2, 3}).begin(), ports.at({2, 3}).end(), p) != ports.at({2, 3}).end()) {
      both.push_back(p);
    }
  }
  REQUIRE(both.size() == 2);
  for (int p : both) {
    CHECK(net->port_slots.at(p) == 2);
  }
  const auto crosses = [&](std::pair<int, int> way, int p) {
    return std::find(ports.at(way).begin(), ports.at(way).end(), p) != ports.at(way).end();
  };
  int nics = 0;
  for (int p : ports.at({1, 0})) {
    if (crosses({1, 2}, p) && !crosses({3, 2}, p)) {
      ++nics;
      CHECK(net->port_slots.count(p) == 0);  // one slot: absent
    }
  }
  CHECK(nics == 1);
}

TEST_CASE("a placement names hosts, or a rule orders the hosts no flow uses", "[runner][scenario]") {
  CHECK(leaf_spine(R"(["h4", "h1"])").nodes[0] == "h4");
  emulator::Scenario pack = leaf_spine(R"("pack")");
  REQUIRE(pack.rank_hosts() == 4);  // h0 and h3 run the other tenant's flow
  CHECK(std::vector<std::string>(pack.nodes.begin(), pack.nodes.begin() + 4) ==
        std::vector<std::string>{"h1", "h2", "h4", "h5"});
  emulator::Scenario spread = leaf_spine(R"("spread")");
  CHECK(std::vector<std::string>(spread.nodes.begin(), spread.nodes.begin() + 4) ==
        std::vector<std::string>{"h1", "h4", "h2", "h5"});
  CHECK(spread.nodes.size() == 6);  // every host is still there, the placed ones first
  emulator::Scenario a = leaf_spine(R"({"rule": "random", "seed": 7})");
  emulator::Scenario b = leaf_spine(R"({"rule": "random", "seed": 7})");
  CHECK(a.nodes == b.nodes);
  std::vector<std::string> placed(a.nodes.begin(), a.nodes.begin() + 4);
  std::sort(placed.begin(), placed.end());
  CHECK(placed == std::vector<std::string>{"h1", "h2", "h4", "h5"});
}

TEST_CASE("a bad placement is refused naming the place", "[runner][scenario]") {
  const auto error_of = [](const std::string& placement) {
    auto s = emulator::parse_scenario(
        R"({"schema": "contend.scenario/1", "name": "t", "duration": "10s",
            "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "1Gbit"}},
            "placement": )" +
            placement + "}",
        "t.json", nullptr);
    REQUIRE_FALSE(s.ok());
    return s.error().message;
  };
  CHECK_THAT(error_of(R"(["h0", "leaf1"])"), Catch::Contains("/placement/1") && Catch::Contains("is a switch"));
  CHECK_THAT(error_of(R"(["h0", "h9"])"), Catch::Contains("/placement/1") && Catch::Contains("\"h9\""));
  CHECK_THAT(error_of(R"(["h0", "h0"])"), Catch::Contains("placed twice"));
  CHECK_THAT(error_of(R"("tight")"), Catch::Contains("unknown placement rule \"tight\""));
  CHECK_THAT(error_of(R"({"rule": "random", "seed": -1})"), Catch::Contains("/placement/seed"));
  CHECK_THAT(error_of("[]"), Catch::Contains("at least one host"));
  auto chain = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "10s", "nodes": ["a", "b"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"}], "placement": ["a", "b"]})",
      "t.json", nullptr);
  REQUIRE_FALSE(chain.ok());
  CHECK_THAT(chain.error().message, Catch::Contains("placement is for fabrics"));
}

namespace {

// 2 leaves of 3 hosts under one spine, ranks on h1 (leaf0), h4 (leaf1), h2 (leaf0), `stalls`
// on the timeline.
Result<ScenarioNetwork> stalled_network(const std::string& stalls) {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "10s",
          "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 3, "spines": 1, "host_rate": "1Gbit"}},
          "placement": ["h1", "h4", "h2"], "timeline": [)" +
          stalls + "]}",
      "t.json", nullptr);
  REQUIRE(s.ok());
  return scenario_network(*s);
}

}  // namespace

TEST_CASE("a fabric's stalled link stalls every pair of ranks whose paths all cross it", "[runner]") {
  // Rank 1's NIC: both of its neighbours' messages wait; ranks 0 and 2 (one leaf) do not.
  auto nic = stalled_network(R"({"at": "1s", "link": "h4-leaf1", "stall": "20ms"})");
  REQUIRE(nic.ok());
  REQUIRE(nic->stalls.size() == 2);
  for (const auto& pair : {std::pair{0, 1}, std::pair{1, 2}}) {
    CHECK(nic->stalls.at(pair).at(0.5, 0) == 0);
    CHECK(nic->stalls.at(pair).at(1.5, 0) == Approx(0.020));
  }
  // leaf0's uplink: the same two pairs cross it, the pair under leaf0 does not.
  auto uplink = stalled_network(R"({"at": "2s", "link": "leaf0-spine0", "stall": "5ms"})");
  REQUIRE(uplink.ok());
  CHECK(uplink->stalls.count({0, 1}) == 1);
  CHECK(uplink->stalls.count({1, 2}) == 1);
  CHECK(uplink->stalls.count({0, 2}) == 0);
  // h1's NIC stalls the looped schedule's pair too: ranks 0 and 2 (h1, h2) cross it.
  auto looped = stalled_network(R"({"at": "1s", "link": "h1-leaf0", "stall": "20ms"})");
  REQUIRE(looped.ok());
  CHECK(looped->stalls.count({0, 1}) == 1);
  CHECK(looped->stalls.count({0, 2}) == 1);
  CHECK(looped->stalls.count({1, 2}) == 0);
  // A host no rank runs on: its stall would change nothing, so it is refused.
  auto idle = stalled_network(R"({"at": "1s", "link": "h5-leaf1", "stall": "20ms"})");
  REQUIRE_FALSE(idle.ok());
  CHECK_THAT(idle.error().message,
             Catch::Contains("\"h5-leaf1\" is stalled") && Catch::Contains("the stall would change nothing"));
  // Beside a link taken down later: refused (a reroute would move the pairs the stall is put on).
  auto rerouted = stalled_network(R"({"at": "1s", "link": "h4-leaf1", "stall": "20ms"},
                                     {"at": "3s", "link": "h0-leaf0", "state": "down"})");
  REQUIRE_FALSE(rerouted.ok());
  CHECK_THAT(rerouted.error().message, Catch::Contains("/timeline/1") && Catch::Contains("stall or reroute"));
  // Two stalled links on one pair's paths: refused, naming both.
  auto two = stalled_network(R"({"at": "1s", "link": "h4-leaf1", "stall": "20ms"},
                                {"at": "1s", "link": "h2-leaf0", "stall": "10ms"})");
  REQUIRE_FALSE(two.ok());
  CHECK_THAT(two.error().message, Catch::Contains("ranks 1 and 2 (h4, h2)") &&
                                      Catch::Contains("two stalled links, \"h2-leaf0\" and \"h4-leaf1\""));
}
