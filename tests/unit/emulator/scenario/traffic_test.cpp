// Another tenant's traffic in a scenario's timeline: a pattern's flows among hosts listed or
// placed by a rule over those no earlier flow uses, so the ranks' placement leaves them out; every
// mistake refused naming its place.
#include <catch2/catch.hpp>

#include "contend/emulator/scenario/scenario.h"
#include "contend/emulator/scenario/traffic_registry.h"

using namespace contend;
using namespace contend::emulator;

namespace {

// 2 leaves of 4 hosts (h0-h3 on leaf0, h4-h7 on leaf1) under one spine, ranks packed.
Result<Scenario> with_traffic(const std::string& timeline, const std::string& network = "") {
  const std::string fabric = network.empty()
                                 ? R"("fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 4, "spines": 1,
                                                     "host_rate": "200Mbit", "uplink_rate": "400Mbit"}},
                          "placement": "pack")"
                                 : network;
  return parse_scenario(R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", )" + fabric +
                            R"(, "timeline": )" + timeline + "}",
                        "t.json", nullptr);
}

// Each flow start as "name from>to at".
std::vector<std::string> flow_starts(const Scenario& s) {
  std::vector<std::string> out;
  for (const Event& e : s.events) {
    if (const auto* start = std::get_if<FlowStart>(&e.action)) {
      out.push_back(start->flow.name + " " + start->flow.from + ">" + start->flow.to + " " +
                    std::to_string(static_cast<int>(e.at_s)));
    }
  }
  return out;
}

std::string traffic_error_of(const std::string& traffic, const std::string& network = "") {
  auto s = with_traffic(R"([{"at": "0s", "traffic": )" + traffic + "}]", network);
  REQUIRE_FALSE(s.ok());
  return s.error().message;
}

}  // namespace

TEST_CASE("a ring spread over the leaves crosses the uplinks, and the ranks are packed around it", "[traffic]") {
  auto s = with_traffic(
      R"([{"at": "2s", "traffic": {"name": "dp", "pattern": "ring", "hosts": 4, "placement": "spread",
                                   "streams": 2, "duration": "10s"}}])");
  REQUIRE(s.ok());
  CHECK(flow_starts(*s) ==
        std::vector<std::string>{"dp:h0-h4 h0>h4 2", "dp:h4-h1 h4>h1 2", "dp:h1-h5 h1>h5 2", "dp:h5-h0 h5>h0 2"});
  int stops = 0;
  for (const Event& e : s->events) {
    if (const auto* start = std::get_if<FlowStart>(&e.action)) {
      CHECK(start->flow.streams == 2);
    }
    if (std::holds_alternative<FlowStop>(e.action)) {
      CHECK(e.at_s == 12);
      ++stops;
    }
  }
  CHECK(stops == 4);
  REQUIRE(s->rank_hosts() == 4);
  CHECK(std::vector<std::string>(s->nodes.begin(), s->nodes.begin() + 4) ==
        std::vector<std::string>{"h2", "h3", "h6", "h7"});
}

TEST_CASE("each shape joins the hosts in its order", "[traffic]") {
  const auto shape = [](const std::string& pattern) {
    auto s = with_traffic(R"([{"at": "0s", "traffic": {"pattern": ")" + pattern +
                          R"(", "hosts": ["h3", "h4", "h5", "h6"]}}])");
    REQUIRE(s.ok());
    return flow_starts(*s);
  };
  CHECK(shape("pairs") == std::vector<std::string>{"pairs:h3-h4 h3>h4 0", "pairs:h5-h6 h5>h6 0"});
  CHECK(shape("incast") ==
        std::vector<std::string>{"incast:h4-h3 h4>h3 0", "incast:h5-h3 h5>h3 0", "incast:h6-h3 h6>h3 0"});
  CHECK(shape("ring").size() == 4);
  const auto all = shape("all-to-all");
  CHECK(all.size() == 12);
  CHECK(all.front() == "all-to-all:h3-h4 h3>h4 0");
  CHECK(traffic_patterns().names() == std::vector<std::string>{"pairs", "ring", "incast", "all-to-all"});
}

TEST_CASE("a pattern placed by a rule takes hosts no earlier flow uses", "[traffic]") {
  // pack: the leaf with most free hosts first (leaf1's 4, beside leaf0's 2), then leaf0's 2.
  auto s = with_traffic(R"([{"at": "0s", "flow": {"from": "h0", "to": "h1"}},
                            {"at": "0s", "traffic": {"name": "a", "pattern": "pairs", "hosts": 2}},
                            {"at": "0s", "traffic": {"name": "b", "pattern": "pairs", "hosts": 2}}])");
  REQUIRE(s.ok());
  CHECK(flow_starts(*s) == std::vector<std::string>{"h0-h1 h0>h1 0", "a:h4-h5 h4>h5 0", "b:h2-h3 h2>h3 0"});
  const auto random = [] {
    auto r = with_traffic(
        R"([{"at": "0s", "traffic": {"pattern": "ring", "hosts": 3, "placement": {"rule": "random", "seed": 5}}}])");
    REQUIRE(r.ok());
    return flow_starts(*r);
  };
  CHECK(random() == random());
}

TEST_CASE("a traffic pattern's mistakes are refused naming the place", "[traffic]") {
  CHECK_THAT(traffic_error_of(R"({"pattern": "mesh", "hosts": 2})"),
             Catch::Contains("/timeline/0/traffic/pattern") && Catch::Contains("\"pairs\", \"ring\""));
  CHECK_THAT(traffic_error_of(R"({"pattern": "pairs", "hosts": 3})"), Catch::Contains("an even number"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": 9})"), Catch::Contains("2 to 8 hosts"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": 1})"), Catch::Contains("/timeline/0/traffic/hosts"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring"})"), Catch::Contains("/timeline/0/traffic: expected \"hosts\""));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": "all"})"),
             Catch::Contains("a list of hosts or how many"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": ["h0", "leaf0"]})"),
             Catch::Contains("/timeline/0/traffic/hosts/1") && Catch::Contains("is a switch"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": ["h0", "h0"]})"), Catch::Contains("placed twice"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": ["h0", "h1"], "placement": "pack"})"),
             Catch::Contains("/timeline/0/traffic/placement"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": 2, "placement": "tight"})"),
             Catch::Contains("unknown placement rule \"tight\""));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": 2, "protocol": "udp"})"),
             Catch::Contains("needs a rate"));
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": 2, "from": "h0"})"),
             Catch::Contains("/timeline/0/traffic/from: unknown key"));
  const std::string chain = R"("nodes": ["a", "b", "c"],
      "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"}, {"name": "bc", "from": "b", "to": "c", "rate": "1Gbit"}])";
  CHECK_THAT(traffic_error_of(R"({"pattern": "ring", "hosts": 2})", chain),
             Catch::Contains("on links alone name the nodes"));
  auto listed = with_traffic(R"([{"at": "0s", "traffic": {"pattern": "pairs", "hosts": ["a", "c"]}}])", chain);
  REQUIRE(listed.ok());
  CHECK(flow_starts(*listed) == std::vector<std::string>{"pairs:a-c a>c 0"});
  // Two patterns of 4 hosts on the 8: a third finds none free.
  auto full = with_traffic(R"([{"at": "0s", "traffic": {"pattern": "ring", "hosts": 4}},
                               {"at": "0s", "traffic": {"pattern": "ring", "hosts": 4}},
                               {"at": "0s", "traffic": {"pattern": "ring", "hosts": 2}}])");
  REQUIRE_FALSE(full.ok());
  CHECK_THAT(full.error().message, Catch::Contains("/timeline/2/traffic/hosts") && Catch::Contains("0 are free"));
}

TEST_CASE("the shipped tenants scenarios: each idle twin puts the ranks where its ring's rule does", "[traffic]") {
  const auto load = [](const std::string& name) {
    auto s = load_scenario(std::string(CONTEND_SOURCE_DIR) + "/emulator/scenarios/fabric/" + name);
    REQUIRE(s.ok());
    return *s;
  };
  for (const char* rule : {"pack", "spread"}) {
    INFO(rule);
    const Scenario ring = load(std::string("tenants-") + rule + "-ring.json");
    const Scenario idle = load(std::string("tenants-") + rule + "-idle.json");
    CHECK(flow_starts(ring) ==
          std::vector<std::string>{"dp:h0-h6 h0>h6 0", "dp:h6-h1 h6>h1 0", "dp:h1-h7 h1>h7 0", "dp:h7-h0 h7>h0 0"});
    CHECK(flow_starts(idle).empty());
    const auto placed = [](const Scenario& s) {
      return std::vector<std::string>(s.nodes.begin(), s.nodes.begin() + static_cast<std::ptrdiff_t>(s.placed));
    };
    const std::vector<std::string> beside_ring = placed(ring);  // every free host, in the rule's order
    REQUIRE(beside_ring.size() >= 4);
    CHECK(std::vector<std::string>(beside_ring.begin(), beside_ring.begin() + 4) == placed(idle));
  }
}
