#pragma once
// Simulated runs of a cell: `iterations` back to back in the simulator, under a static schedule or
// a policy, each iteration starting where the last ended on the scenario's clock, on the
// scenario's network as truth/network.h resolves it. Policies decide from what the runtime would
// measure in band: the goodput each link gave over the iteration before. Pure (but
// simulated_workload); thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/pipeline/policy/adaptive.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/truth/network.h"
#include "contend/sim/simulator.h"

namespace contend::runner {

// What a reference policy deciding beside the cell's on the same reports would have run at an
// iteration, and that schedule's time over the same stretch of the network.
struct ShadowIteration {
  std::string policy;  // "observer", "oracle"
  pipeline::Decision decision;
  double iteration_s = 0;
};

struct SimIteration {
  int iteration = 0;
  int k = 0;
  double start_s = 0;  // on the scenario's clock
  double iteration_s = 0;
  double compute_s = 0;                     // rank 0's, as a real rank-0 line reports it
  std::uint64_t peak_activation_bytes = 0;  // the worst stage's
  std::optional<pipeline::Decision> decision;
  std::vector<ShadowIteration> shadows;  // with shadows, in an adaptive cell: the observer's and the oracle's
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
// `shadows`, for the `adaptive` policy: the observer and the oracle, with its options, decide beside
// it each iteration on the same reports (each told its own choice's time over the iteration
// before), and their choices are timed on the same network: where the gap to the oracle goes, one
// decision at a time (docs/adaptive.md). Other cells ignore it.
Result<SimCell> simulate_cell(const Workload& w, const pipeline::ScheduleChoice& choice, const ScenarioNetwork& network,
                              const RuntimeModel& runtime = {}, bool shadows = false);

}  // namespace contend::runner
