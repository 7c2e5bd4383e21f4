#pragma once
// Throughput, the one place it is computed: of a real cell from rank 0's iteration log, of a
// simulated one from its iterations, and the samples an iteration carries
// (docs/metrics.md, "Experiments"). Pure but for what reads a cell's events log (its clock).
// Thread-safe.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/iteration_log.h"

namespace contend::runner {

// Samples per second of rank 0 over the iterations after the warm-up, from the first one's start
// to the last one's end; kParse naming the file when it has fewer lines than that. With a
// window: the samples rank 0 completed inside it on the scenario's clock (time 0 from the events
// log's start line), over its length; kInvalidArgument when the cell does not cover it.
Result<double> cell_throughput(const IterationLog& log, const Workload& w,
                               const std::optional<MeasureWindow>& window = {}, const std::string& events_path = "");
// When rank 0 started its first iteration (the warm-up's), in seconds after `zero_s` on its clock
// (the steady clock): a real cell's start-up (the workers, their connections, a policy's probe).
Result<double> first_iteration_s(const IterationLog& log, double zero_s);

// How even rank 0's measured iterations were: a worker stopped for a while (SIGSTOP, a stalled
// machine) shows as one iteration many times the median, which the cell's record keeps.
struct IterationSpread {
  double median_s = 0;
  double slowest_s = 0;
  int slowest = 0;  // its iteration
};
// (Nothing for a log cell_throughput refuses.)
IterationSpread iteration_spread(const IterationLog& log, const Workload& w);

// The same from rank 0's (start_s, iteration_s) of the iterations counted (without a window: those
// after the warm-up), time 0 of the scenario at `zero`; `what` names them in errors.
Result<double> iterations_throughput(const std::vector<std::pair<double, double>>& rank0, const Workload& w,
                                     const std::optional<MeasureWindow>& window, double zero, const std::string& what);

// The scenario's clock as a cell's events log's start line gives it: the steady clock at its
// time 0, and its duration (0 when the line has none). kNotFound / kParse naming the file.
struct ScenarioClock {
  double zero_s = 0;
  double duration_s = 0;
};
Result<ScenarioClock> scenario_clock(const std::string& events_path);

// A stretch of work something reported: `amount` (samples, or a job's own unit) done from
// `start_s` (steady clock, as the events log's) over `seconds`. Rank 0's iterations and a
// command job's steps (job_log.h) alike.
struct Interval {
  double start_s = 0;
  double seconds = 0;
  double amount = 0;
};

// Amount per second of the intervals counted: without a window, all of them from the first start
// to the last end (kParse when fewer than `at_least`); with one, what falls inside it on the
// scenario's clock (time 0 at `zero`), an interval straddling an end counted in proportion
// (kInvalidArgument when they do not cover it). `what` names them in errors.
Result<double> intervals_throughput(const std::vector<Interval>& counted, const std::optional<MeasureWindow>& window,
                                    double zero, std::size_t at_least, const std::string& what);
// The same with the scenario's clock read from the cell's events log, and a cell whose counted
// intervals (without a window) ran past the scenario's end refused, as cell_throughput does.
Result<double> measured_throughput(const std::vector<Interval>& counted, std::size_t at_least,
                                   const std::optional<MeasureWindow>& window, const std::string& events_path,
                                   const std::string& what);

}  // namespace contend::runner
