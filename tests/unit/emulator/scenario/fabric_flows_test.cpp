// A fabric's flows at the flow level: paths through switches, a stated ECMP model that spreads
// streams and keeps each on one path, max-min shares at the timeline's state, links down avoided.
#include "contend/emulator/scenario/fabric_flows.h"

#include <catch2/catch.hpp>

using namespace contend;
using namespace contend::emulator;

namespace {

Scenario fabric_scenario(const std::string& network, const std::string& timeline) {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "f", "duration": "20s", )" + network +
                           R"(, "timeline": )" + timeline + "}";
  auto s = parse_scenario(text, "f.json", nullptr);
  REQUIRE(s.ok());
  return *s;
}

std::string leaf_spine(int spines, const std::string& host_rate) {
  return R"("fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 4, "spines": )" + std::to_string(spines) +
         R"(, "host_rate": ")" + host_rate + R"(", "uplink_rate": "200Mbit"}})";
}

std::string flow(const std::string& at, const std::string& from, const std::string& to, const std::string& extra = "") {
  return R"({"at": ")" + at + R"(", "flow": {"from": ")" + from + R"(", "to": ")" + to + "\"" + extra + "}}";
}

const PredictedFlow& named(const FabricPrediction& p, const std::string& name) {
  for (const PredictedFlow& f : p.flows) {
    if (f.name == name) {
      return f;
    }
  }
  FAIL("no flow " << name);
  return p.flows.front();
}

}  // namespace

TEST_CASE("flows converging on an oversubscribed uplink get their max-min shares", "[fabric][predict]") {
  const Scenario s =
      fabric_scenario(leaf_spine(1, "200Mbit"), "[" + flow("0s", "h0", "h4") + ", " + flow("0s", "h1", "h5") + ", " +
                                                    flow("0s", "h2", "h6") + ", " +
                                                    flow("0s", "h3", "h7", R"(, "rate": "20Mbit")") + R"(,
                            {"at": "5s", "link": "h0-leaf0", "rate": "30Mbit"}])");
  const double port = kFabricGoodput * 200e6;
  const FabricPrediction before = predict_flows(s, 1);
  CHECK(named(before, "h0-h4").rate_bps == Approx((port - 20e6) / 3));
  CHECK(named(before, "h0-h4").bottleneck == "leaf0-spine0@leaf0");
  CHECK(named(before, "h3-h7").rate_bps == Approx(20e6));  // its pacing holds it
  CHECK(named(before, "h3-h7").bottleneck.empty());
  CHECK(named(before, "h0-h4").ports ==
        std::vector<std::string>{"h0-leaf0@h0", "leaf0-spine0@leaf0", "leaf1-spine0@spine0", "h4-leaf1@leaf1"});
  CHECK(before.ports.at("leaf0-spine0@leaf0").load_bps == Approx(port));
  CHECK(before.ports.at("leaf0-spine0@leaf0").streams == 4);
  // From 5 s h0's NIC holds it to 0.956 x 30 Mbit/s, and the others share what it leaves.
  const FabricPrediction after = predict_flows(s, 6);
  CHECK(named(after, "h0-h4").rate_bps == Approx(kFabricGoodput * 30e6));
  CHECK(named(after, "h1-h5").rate_bps == Approx((port - 20e6 - kFabricGoodput * 30e6) / 2));
  // Before any flow starts, nothing runs.
  CHECK(predict_flows(fabric_scenario(leaf_spine(1, "200Mbit"), "[" + flow("2s", "h0", "h4") + "]"), 1).flows.empty());
}

TEST_CASE("ECMP in the model: streams spread over both spines, each on one path, the same every time",
          "[fabric][predict]") {
  std::string timeline = "[";
  for (int i = 0; i < 4; ++i) {
    timeline +=
        (i > 0 ? ", " : "") + flow("0s", "h" + std::to_string(i), "h" + std::to_string(i + 4), R"(, "streams": 16)");
  }
  const Scenario s = fabric_scenario(leaf_spine(2, "400Mbit"), timeline + "]");
  const FabricPrediction p = predict_flows(s, 0);
  const PortLoad& up0 = p.ports.at("leaf0-spine0@leaf0");
  const PortLoad& up1 = p.ports.at("leaf0-spine1@leaf0");
  CHECK(up0.streams + up1.streams == 64);
  CHECK(up0.streams >= 16);  // 64 fair coin flips: fewer than 16 on a side, about 1 in 15,000
  CHECK(up1.streams >= 16);
  double total = 0;
  for (const PredictedFlow& f : p.flows) {
    total += f.rate_bps;
  }
  CHECK(total == Approx(2 * kFabricGoodput * 200e6));  // both spines full
  const FabricPrediction again = predict_flows(s, 0);
  CHECK(again.ports.at("leaf0-spine0@leaf0").streams == up0.streams);
}

TEST_CASE("a link down at the time is avoided, and a host cut off is unroutable", "[fabric][predict]") {
  const Scenario s = fabric_scenario(
      leaf_spine(2, "400Mbit"), "[" + flow("0s", "h0", "h4", R"(, "streams": 8)") + ", " + flow("0s", "h1", "h5") + R"(,
                            {"at": "3s", "link": "leaf0-spine0", "state": "down"},
                            {"at": "4s", "link": "h1-leaf0", "state": "down"}])");
  const FabricPrediction p = predict_flows(s, 3.5);
  CHECK(p.ports.at("leaf0-spine0@leaf0").streams == 0);
  CHECK(p.ports.at("leaf0-spine0@leaf0").capacity_bps == 0);
  CHECK(p.ports.at("leaf0-spine1@leaf0").streams == 9);
  CHECK(predict_flows(s, 4.5).unroutable == std::vector<std::string>{"h1-h5"});
  CHECK(predict_flows(s, 4.5).flows.size() == 1);
}

TEST_CASE("a flow keeps the NICs the topology gives it: its first NIC down, it is unroutable", "[fabric][predict]") {
  // The emulator's flow engine takes a flow's addresses from the topology alone (h0's first NIC,
  // on rail0): with that link down no other rail carries it, and the prediction says so.
  const Scenario s =
      fabric_scenario(R"("fabric": {"rail-optimized": {"hosts": 2, "rails": 2, "rate": "1Gbit"}})",
                      "[" + flow("0s", "h0", "h1") + R"(, {"at": "1s", "link": "h0-rail0", "state": "down"}])");
  CHECK(named(predict_flows(s, 0.5), "h0-h1").ports == std::vector<std::string>{"h0-rail0@h0", "h1-rail0@rail0"});
  CHECK(predict_flows(s, 2).unroutable == std::vector<std::string>{"h0-h1"});
}

TEST_CASE("between hosts a link joins, a flow takes that link", "[fabric][predict]") {
  const Scenario s =
      fabric_scenario(R"("nodes": ["a", "b", "c"], "links": [{"name": "ab", "from": "a", "to": "b", "rate": "100Mbit"},
                                                                   {"name": "bc", "from": "b", "to": "c", "rate": "1Gbit"}])",
                      "[" + flow("0s", "a", "b", R"(, "streams": 2)") + ", " + flow("0s", "c", "b") + "]");
  const FabricPrediction p = predict_flows(s, 0);
  CHECK(named(p, "a-b").ports == std::vector<std::string>{"ab@a"});
  CHECK(named(p, "a-b").rate_bps == Approx(kFabricGoodput * 100e6));
  CHECK(named(p, "c-b").ports == std::vector<std::string>{"bc@c"});
}

TEST_CASE("which links every path between two hosts crosses, and which only some", "[fabric][predict]") {
  const Scenario two = fabric_scenario(leaf_spine(2, "400Mbit"), "[]");
  CHECK(paths_cross(two, "h0", "h4", "h0-leaf0") == PathCrossing::kEvery);  // the hosts' own NICs
  CHECK(paths_cross(two, "h0", "h4", "h4-leaf1") == PathCrossing::kEvery);
  CHECK(paths_cross(two, "h0", "h4", "leaf0-spine0") == PathCrossing::kSome);  // ECMP's hash picks a spine
  CHECK(paths_cross(two, "h0", "h4", "h1-leaf0") == PathCrossing::kNone);
  CHECK(paths_cross(two, "h0", "h1", "leaf0-spine0") == PathCrossing::kNone);  // under one leaf
  const Scenario one = fabric_scenario(leaf_spine(1, "400Mbit"), "[]");
  CHECK(paths_cross(one, "h0", "h4", "leaf1-spine0") == PathCrossing::kEvery);
  // Two equal-cost paths between s1 and s4 that meet again before b: s4-s5 is on both, s1-s2 on one.
  const Scenario diamond = fabric_scenario(R"("nodes": ["a", "b"], "switches": ["s1", "s2", "s3", "s4", "s5"],
      "links": [{"name": "a-s1", "from": "a", "to": "s1", "rate": "1Gbit"},
                {"name": "s1-s2", "from": "s1", "to": "s2", "rate": "1Gbit"},
                {"name": "s1-s3", "from": "s1", "to": "s3", "rate": "1Gbit"},
                {"name": "s2-s4", "from": "s2", "to": "s4", "rate": "1Gbit"},
                {"name": "s3-s4", "from": "s3", "to": "s4", "rate": "1Gbit"},
                {"name": "s4-s5", "from": "s4", "to": "s5", "rate": "1Gbit"},
                {"name": "b-s5", "from": "b", "to": "s5", "rate": "1Gbit"}])",
                                           "[]");
  CHECK(paths_cross(diamond, "a", "b", "s4-s5") == PathCrossing::kEvery);
  CHECK(paths_cross(diamond, "b", "a", "s4-s5") == PathCrossing::kEvery);
  CHECK(paths_cross(diamond, "a", "b", "s1-s2") == PathCrossing::kSome);
  CHECK(paths_cross(diamond, "b", "a", "s3-s4") == PathCrossing::kSome);
  // A link down at time 0 is on no path: the other way of the diamond is every path then.
  const Scenario cut = fabric_scenario(R"("nodes": ["a", "b"], "switches": ["s1", "s2", "s3", "s4"],
      "links": [{"name": "a-s1", "from": "a", "to": "s1", "rate": "1Gbit"},
                {"name": "s1-s2", "from": "s1", "to": "s2", "rate": "1Gbit"},
                {"name": "s1-s3", "from": "s1", "to": "s3", "rate": "1Gbit"},
                {"name": "s2-s4", "from": "s2", "to": "s4", "rate": "1Gbit"},
                {"name": "s3-s4", "from": "s3", "to": "s4", "rate": "1Gbit"},
                {"name": "b-s4", "from": "b", "to": "s4", "rate": "1Gbit"}])",
                                       R"([{"at": "0s", "link": "s1-s2", "state": "down"}])");
  CHECK(paths_cross(cut, "a", "b", "s1-s3") == PathCrossing::kEvery);
  CHECK(paths_cross(cut, "a", "b", "s1-s2") == PathCrossing::kNone);
}
