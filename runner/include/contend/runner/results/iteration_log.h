#pragma once
// The iteration log as the runner reads it: every rank's contend.iteration/1 lines of a cell
// (runs/CELL.jsonl, docs/runtime.md). This is its one reader, and a cell's log is read once:
// throughput and the spread of rank 0's iterations (throughput.h) and a calibration's costs
// (simulated/calibration.h) take what it read. Thread-safe (no shared state).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/result.h"

namespace contend::runner {

// What the runtime measured in one iteration beyond its length (a simulated cell's lines have
// none): compute per rank line, the sends' hand-off and count, the end-of-iteration flush and step.
struct RuntimeTimings {
  double forward_s = 0;
  double backward_s = 0;
  double send_wait_s = 0;
  double flush_s = 0;
  double step_s = 0;
  double sends = 0;
};

// One rank's line for one iteration, as far as it has the numbers its readers count.
struct IterationLine {
  int number = 0;  // its line in the file, for errors
  int rank = 0;
  std::optional<int> iteration;
  std::optional<double> start_s;  // on the rank's steady clock
  std::optional<double> iteration_s;
  std::optional<RuntimeTimings> timings;
  bool partial_timings = false;  // it has "sends" but not every other timing
};

struct IterationLog {
  std::string path;
  std::vector<IterationLine> lines;  // every rank's records, in the order written

  // Rank 0's (start_s, iteration_s) of the iterations from `from_iteration` on, in order; kParse
  // naming the file and line for a line of rank 0 without an integer iteration and a numeric
  // start_s and iteration_s.
  Result<std::vector<std::pair<double, double>>> rank0(int from_iteration) const;
};

// Reads `path` once, every record in it (a JSON object with an integer "rank"; other lines, such
// as one cut short by a killed worker, are passed over). kNotFound when it cannot be read.
Result<IterationLog> read_iteration_log(const std::string& path);

}  // namespace contend::runner
