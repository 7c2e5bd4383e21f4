#pragma once
// Measuring one cell: run it (simulated, on hosts, or in namespaces here) into its files, read
// what it wrote once, and say what a reader of its record should know (the hypervisor's steal, an
// iteration many times the median). Private to the runner's run/.

#include <atomic>
#include <optional>
#include <string>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/iteration_log.h"
#include "contend/runner/run.h"
#include "contend/runner/truth/network.h"
#include "results/results_dir.h"
#include "results/throughput.h"

namespace contend::runner {

// Before anything: a real run here needs what its backend needs (cuda: a device); a user's job
// runs only for real, and (on this host) in a folder that is here; a fabric runs on this host
// (in namespaces) or simulated, not across cluster hosts.
Result<void> check_runnable_here(const Experiment& e, const RunOptions& o);

// What one cell measured, read from its files once.
struct CellOutcome {
  MeasuredCell measured;            // its throughput, and the steal meanwhile
  IterationSpread spread;           // how even rank 0's iterations were (contend's pipeline)
  std::optional<IterationLog> log;  // its iteration log (contend's pipeline), for the calibration
};

// Runs `cell` into its files in `dir` (the stale ones of an interrupted attempt removed first) and
// measures it, or says why it could not be.
Result<CellOutcome> measure_cell(const Experiment& e, const Cell& cell, const std::string& dir, const RunOptions& o,
                                 const ScenarioNetwork& truth, const std::atomic<bool>& stop);

}  // namespace contend::runner
