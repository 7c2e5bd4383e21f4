#pragma once
// What the runtime costs beyond the stage times the workload names and the wire, so that
// simulated runs predict real ones (contend.calibration/2, docs/experiment-format.md):
//  - forward_s, backward_s: a rank's compute per micro-batch as the ranks measured it (an emulated
//    stage's sleep wakes late, a busy host delays a step), in place of the workload's;
//  - costs: the compute lane's hand-off per send and each rank's end-of-iteration flush and
//    optimizer step, measured by every rank (sim::RuntimeCosts);
//  - latency_s: per transfer (the sender's thread, the kernel's path, the receiver's wake-up), the
//    one value for which the simulator reproduces the measured throughput of the cells it was fitted
//    on: the only fitted number of a real run's calibration;
//  - line_bps: the rate a burst crosses the unshaped path at; fitted by a host's calibration.
// A calibration belongs to the workload it was measured with; read_calibration refuses another's.
// Measured by a real `contend run` (calibration.json in its results, fitted on the baseline's
// cells) or on this host over loopback (measure_on_host). Not thread-safe.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/real/launcher.h"
#include "contend/runner/results/iteration_log.h"
#include "contend/runner/simulated/simulate.h"
#include "contend/runner/truth/network.h"
#include "contend/sim/sim_config.h"

namespace contend::runner {

struct Calibration {
  double forward_s = 0;  // 0: the workload's own
  double backward_s = 0;
  RuntimeModel runtime;     // the costs and the fitted latency
  nlohmann::json workload;  // pipeline::stage_costs_json() of the workload measured (compared whatever the order)
  std::string source;       // where it comes from, said in the output
};

// The workload the simulator runs under `c`: its stage times replaced by the measured ones.
Workload calibrated_workload(const Workload& w, const Calibration& c);

// contend.calibration/2. read_calibration: kParse naming the field, kInvalidArgument when it was
// measured for another workload (both named).
Result<Calibration> read_calibration(const std::string& path, const Workload& w);
Result<void> write_calibration(const std::string& path, const Calibration& c);

// Everything but the latency, from the rank lines of real cells of `w` (their iterations after
// the warm-up). kParse when no log holds a measured iteration.
Result<Calibration> measured_costs(const Workload& w, const std::vector<IterationLog>& logs);

// The latency at which `throughput_at(latency)` (samples/s, decreasing in it) equals `measured`,
// by bisection on [0, 50 ms]; 0 when even no latency predicts less than measured.
Result<double> fit_latency(const std::function<Result<double>(double)>& throughput_at, double measured);

// The line rate at which `throughput_at(line_bps)` (samples/s, increasing in it) equals
// `measured`, by bisection on the log of 100 Mbit/s to 1 Tbit/s; 0 (unlimited) when even 1 Tbit/s
// predicts no more than measured.
Result<double> fit_line_rate(const std::function<Result<double>(double)>& throughput_at, double measured);

// Samples per second of a simulated cell, as cell_throughput counts a real one (over `window` on
// the scenario's clock when set).
Result<double> simulated_throughput(const SimCell& cell, const Workload& w,
                                    const std::optional<MeasureWindow>& window = std::nullopt);

// A real run's calibration: the costs from `metrics` (the baseline's finished cells), the latency
// fitted per scenario to the baseline's measured median throughput there (`medians`: the
// scenario's links and that median, over the experiment's measure window), and of those the one
// with the least squared relative error over every scenario taken (a noisy scenario's fit is
// outvoted, not averaged in); that at each line rate of a grid (none first, then 1 Tbit/s down to
// 100 Mbit/s), the line rate kept where it explains the scenarios clearly better (the rate a
// shaper's burst crosses at: at 2 Gbit/s a 1 MiB tensor, at 100 Mbit/s a fifth of it). `start_s`: when the baseline's
// cells started their first iteration on the scenario's clock (the median), where the simulated cells then start
// theirs.
struct MeasuredScenario {
  std::string name;
  const ScenarioNetwork* links = nullptr;
  double throughput = 0;
};
Result<Calibration> calibrate_from_run(const Workload& w, const pipeline::ScheduleChoice& baseline,
                                       const std::vector<IterationLog>& metrics,
                                       const std::vector<MeasuredScenario>& medians,
                                       const std::optional<MeasureWindow>& window = std::nullopt, double start_s = 0);

// What a probe of a workload over loopback measured: everything but the latency, and its
// throughput.
struct LoopbackProbe {
  Workload workload;
  Calibration costs;
  double throughput = 0;
};

// A host's calibration from two probes of 1F1B over loopback: `small`, with tensors too small for
// loopback's rate to cost anything, gives the latency per transfer (fitted with loopback
// unlimited); `full`, with the workload's tensors, gives the costs and, with that latency, the line
// rate loopback carried them at (fitted with loopback at that rate). One latency fitted to the
// workload's tensors alone would count their time on loopback again on every shaped link.
Result<Calibration> fit_loopback(const LoopbackProbe& small, const LoopbackProbe& full);

// A calibration measured here: `w` run as 1F1B by stage-many `contend worker` processes over
// loopback (no shaping, no root), for a few iterations, twice: with 4 KiB tensors, to which the
// latency is fitted, and with the workload's, whose costs it keeps and to which the line rate
// (loopback's, for the tensors' bytes) is fitted with that latency.
Result<Calibration> measure_on_host(const Experiment& e, const LaunchOptions& launch);

}  // namespace contend::runner
