// A simulated cell's tenants: the scenario's flows replayed beside the pipeline's ways at their
// mean rates, summarized as the player summarizes a real cell's flows.
#include "simulated/simulated_tenants.h"

#include <catch2/catch.hpp>

#include "contend/emulator/scenario/fabric_flows.h"

using namespace contend;
using namespace contend::runner;

namespace {

// Two leaves of four hosts at 200 Mbit/s, one 200 Mbit/s uplink each; the ranks spread over the
// hosts the flows leave.
emulator::Scenario fabric(const std::string& timeline) {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "f", "duration": "20s", "placement": "spread",
          "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 4, "spines": 1, "host_rate": "200Mbit",
                                    "uplink_rate": "200Mbit"}}, "timeline": )" +
          timeline + "}",
      "f.json", nullptr);
  REQUIRE(s.ok());
  return *s;
}

// A cell of ten 1 s iterations of two ranks; rank 0 sent `bytes` in the last.
SimCell cell(std::uint64_t bytes) {
  SimCell c;
  for (int i = 0; i < 10; ++i) {
    c.iterations.push_back({i, 1, static_cast<double>(i), 1.0, 0, 0, std::nullopt, {}});
  }
  c.last.makespan_s = 1;
  c.last.ranks.resize(2);
  c.last.ranks[0].bytes_sent = bytes;
  return c;
}

const double kPort = emulator::kFabricGoodput * 200e6;

}  // namespace

TEST_CASE("a simulated tenant's stream gets what the pipeline's way at its mean rate leaves of the uplink",
          "[runner][simulate]") {
  const emulator::Scenario s = fabric(R"([{"at": "0s", "flow": {"from": "h0", "to": "h4"}}])");
  // Spread: rank 0 on leaf 0 (h0-h3), rank 1 on leaf 1 (h4-h7), so their way crosses the uplink.
  REQUIRE(std::stoi(s.nodes[0].substr(1)) < 4);
  REQUIRE(std::stoi(s.nodes[1].substr(1)) >= 4);
  const auto alone = simulated_flow_summaries(s, cell(0));
  REQUIRE(alone.size() == 1);
  CHECK(alone[0]["kind"] == "flow_summary");
  CHECK(alone[0]["flow"] == "h0-h4");
  CHECK(alone[0]["simulated"] == true);
  CHECK(alone[0]["active_s"].get<double>() == Approx(10));  // until the cell's end, not the scenario's
  CHECK(alone[0]["achieved_bps"].get<double>() == Approx(kPort));
  // Rank 0 (on leaf 0) sends 6.25 MB a second to rank 1 (on leaf 1): 50 Mbit/s over the same uplink.
  const auto beside = simulated_flow_summaries(s, cell(6'250'000));
  REQUIRE(beside.size() == 1);
  CHECK(beside[0]["achieved_bps"].get<double>() == Approx(kPort - 50e6));
  CHECK_FALSE(beside[0].contains("iterations"));
}

TEST_CASE("a simulated closed-loop tenant has its job's iterations, and a chain's flows are not predicted",
          "[runner][simulate]") {
  const emulator::Scenario s =
      fabric(R"([{"at": "0s", "flow": {"from": "h0", "to": "h4", "iterate": {"bytes": "1MiB", "compute": "100ms"}}}])");
  const auto job = simulated_flow_summaries(s, cell(0));
  REQUIRE(job.size() == 1);
  const double send = 8.0 * (1 << 20) / kPort;
  CHECK(job[0]["iterations"] == static_cast<int>(10 / (0.1 + send)));
  CHECK(job[0]["iteration_s"].get<double>() == Approx(0.1 + send));
  CHECK(job[0]["achieved_bps"].get<double>() == Approx(kPort * send / (0.1 + send)).epsilon(0.02));
  auto chain = emulator::parse_scenario(R"({"schema": "contend.scenario/1", "name": "c", "duration": "20s",
    "nodes": ["a", "b"], "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Mbit"}],
    "timeline": [{"at": "0s", "flow": {"from": "a", "to": "b"}}]})",
                                        "c.json", nullptr);
  REQUIRE(chain.ok());
  CHECK(simulated_flow_summaries(*chain, cell(0)).empty());
}
