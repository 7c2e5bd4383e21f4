#pragma once
// Which ranks of a cell exchange tensors, and over which of its scenario's links: a chain joins
// neighbouring ranks, but a looped schedule (interleaved, zero-bubble) also sends from the last
// rank to the first. Traffic between ranks no scenario link joins crosses the unshaped switch; the
// runner says so and routes it there. On a fabric every pair crosses the fabric's shaped ports.
// Pure; thread-safe.

#include <string>
#include <vector>

#include "contend/emulator/net/topology.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::runner {

// RankPair::link on a fabric: the pair is routed through switches.
inline constexpr const char* kFabricWay = "fabric";

struct RankPair {
  int a = 0;  // a < b
  int b = 0;
  std::string link;  // the scenario link joining their nodes; kFabricWay; "" when none does
};

// The pairs of ranks whose stages exchange tensors under `schedule` on `s` (a policy: the
// placement of its first schedule, which all its choices share).
std::vector<RankPair> exchange_pairs(const emulator::Scenario& s, const pipeline::ScheduleChoice& schedule);

// One sentence for each (scenario, schedule, pair) of `e` that no scenario link joins.
std::vector<std::string> unshaped_traffic(const Experiment& e);

// Per rank, the worker options (`--reach R=ADDR:PORT`) for its neighbours beyond the chain: the
// peer's address on the link joining them, else its switch address.
std::vector<std::vector<std::string>> reach_options(const std::vector<RankPair>& pairs,
                                                    const emulator::TopologyPlan& plan, int port);

}  // namespace contend::runner
