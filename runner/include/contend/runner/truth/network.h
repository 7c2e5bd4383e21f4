#pragma once
// The ground truth of a scenario as the workload sees it, and simulated runs on it.
//  - workload_rates: the goodput the pipeline's TCP gets on each link of the chain over scenario
//    time, from the scenario's own timeline (never measured): the oracle's input and the
//    simulator's network;
//  - simulate_cell: a run of `iterations` back to back in the simulator, under a static schedule
//    or a policy, each iteration starting where the last ended on the scenario's clock. Policies
//    decide from what the runtime would measure in band: the goodput each link gave over the
//    iteration before.
// Pure (but simulated_workload); thread-safe.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/rate_trace.h"
#include "contend/common/result.h"
#include "contend/common/stall_schedule.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/pipeline/policy/adaptive.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/sim/simulator.h"

namespace contend::runner {

// TCP payload per byte on the wire with 1500-byte frames: 1448 of 1514 bytes (measured here at
// exactly this ratio of the shaped rate, docs/emulator.md).
inline constexpr double kTcpGoodput = 1448.0 / 1514.0;

// One trace per link between consecutive nodes (p - 1 of them), from the lower node to the higher
// (the activations' way). A background flow on a link takes what its preemption policy gives it
// (background-first: its rate, all of it when unpaced; fair: up to half; split: the background
// share), in its own direction only: each end shapes what it sends. kInvalidArgument when
// consecutive nodes have no link.
Result<std::vector<RateTrace>> workload_rates(const emulator::Scenario& scenario);

// The goodput between every pair of nodes a scenario link joins, by node index (a < b), computed as
// workload_rates does: the simulated network of any schedule, a looped one's ring included (pairs
// no link joins cross the unshaped switch: no limit).
// `back`: the other way, from the higher node to the lower (the gradients'), which background
// flows from b to a take from.
using PipelineLinks = std::map<std::pair<int, int>, RateTrace>;
Result<PipelineLinks> pipeline_links(const emulator::Scenario& scenario, bool back = false);
// workload_rates from the scenario's pipeline_links, computed already.
Result<std::vector<RateTrace>> chain_rates(const emulator::Scenario& scenario, const PipelineLinks& links);
// The links r -> r+1 of a pipeline of `stages`; kInvalidArgument naming the ranks no link joins.
Result<std::vector<RateTrace>> chain_of(const PipelineLinks& links, int stages);

// Every stalled link's stall schedule, by the node indices it joins (a < b): the scenario's
// kSetStall events, at their times and from their iterations.
using PipelineStalls = std::map<std::pair<int, int>, StallSchedule>;
PipelineStalls pipeline_stalls(const emulator::Scenario& scenario);

// What the simulator runs a scenario's cells on: every linked pair's goodput (both ways alike
// unless `back` has the pair) and every stalled link's stalls (a network of rates alone converts).
struct ScenarioNetwork {
  ScenarioNetwork() = default;
  ScenarioNetwork(PipelineLinks l, PipelineStalls s = {}) : links(std::move(l)), stalls(std::move(s)) {}  // NOLINT
  PipelineLinks links;  // from the lower node to the higher
  PipelineLinks back;   // from the higher node to the lower, where it differs
  PipelineStalls stalls;
};
Result<ScenarioNetwork> scenario_network(const emulator::Scenario& scenario);
// Every linked pair's other way (from the higher node to the lower): `back` where it has the
// pair, else `links`.
PipelineLinks back_links(const ScenarioNetwork& network);

// A scenario's network as the workers are told it, resolved once by the runner (schema
// contend.truth/1, docs/experiment-format.md#the-results-folder): the workload's goodput on each
// chain link (workload_rates; the oracle's), the same the other way (`back`, optional: as
// `links` when absent), and every stalled link's stalls (the transports'):
//   {"schema": "contend.truth/1", "scenario": "periodic", "links": [[[0, 956e6], [2, 95.6e6]], ...],
//    "back": [[[0, 956e6]], ...],
//    "stalls": [{"nodes": [6, 7], "at_time": [[0, 0.03]], "at_iteration": [[15, 0.03], [85, 0]]}]}
// At most kMaxTracePoints points in all. Errors name the file and the JSON pointer.
struct NetworkTruth {
  std::vector<RateTrace> links;
  PipelineStalls stalls;
  std::vector<RateTrace> back{};  // empty: as links
};
Result<void> write_truth(const std::string& path, const std::string& scenario, const NetworkTruth& truth);
Result<NetworkTruth> read_truth(const std::string& path);

// The HTB/TBF burst the emulator gives a link whose workload goodput is `goodput_bps`.
std::uint64_t shaper_burst_bytes(double goodput_bps);

struct SimIteration {
  int iteration = 0;
  int k = 0;
  double start_s = 0;  // on the scenario's clock
  double iteration_s = 0;
  double compute_s = 0;                     // rank 0's, as a real rank-0 line reports it
  std::uint64_t peak_activation_bytes = 0;  // the worst stage's
  std::optional<pipeline::Decision> decision;
};

struct SimCell {
  std::vector<SimIteration> iterations;
  sim::SimResult last;  // the last iteration, with its trace (times from its start)
};

// The workload the simulator runs for `w`: emulated as it is; cpu with each stage's forward and
// backward time profiled here (the mean over stages of the real model, `repeats` runs each) and
// the model's activation size; a backend that needs a device
// (cuda) is kUnsupported: only its device can time it. Not pure: profiling runs the model.
Result<Workload> simulated_workload(const Workload& w, int repeats = 5);

// What the runtime adds to the simulated pipeline beyond compute and the wire (calibration.h
// measures it): none by default, the ideal pipeline.
struct RuntimeModel {
  sim::RuntimeCosts costs;
  double latency_s = 0;  // per transfer, on every link
  double line_bps = 0;   // the unshaped path's rate: a shaper's burst and what crosses no shaper; 0: at once
  double start_s = 0;    // when the first iteration starts on the scenario's clock (the cell's start-up)
};

// Simulates `w.warmup + w.iterations` iterations of `schedule` (a static schedule or a policy)
// starting at scenario time 0 on `links`, with `runtime`'s costs (policies measure them in band).
Result<SimCell> simulate_cell(const Workload& w, const Spec& schedule, const ScenarioNetwork& network,
                              const RuntimeModel& runtime = {});

}  // namespace contend::runner
