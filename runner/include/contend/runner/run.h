#pragma once
// Running an experiment: every cell of the matrix not finished yet, for real in namespaces on
// this host, on cluster hosts (hosts.h), or in the simulator, into a results folder
// (results_dir.h) that it creates or continues; then the summary (summary.h). Progress goes to
// stderr. `stop` (SIGINT/SIGTERM) ends the cell in flight, removes what it created, and keeps the
// finished cells for --resume. Not thread-safe: one run per process.

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "contend/common/fd.h"
#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/hosts/hosts.h"
#include "contend/runner/real/launcher.h"
#include "contend/runner/results/summary.h"
#include "contend/runner/simulated/calibration.h"

namespace contend::runner {

struct RunOptions {
  std::string out;     // results folder to create; empty: results/NAME-TIMESTAMP[-sim] (renamed if taken)
  std::string resume;  // or: a results folder of the same experiment and mode to continue
  bool simulate = false;
  // Every cell's repetitions in place of the experiment's (0: its own); env.json records it, and a
  // resumed run keeps the count it began with.
  int repetitions = 0;
  // --simulate: the runtime's costs (calibration.h); unset: the ideal pipeline.
  std::optional<Calibration> calibration;
  // --simulate: adaptive cells' iterations also carry what the observer and the oracle would have
  // run beside it (simulate_cell's `shadows`).
  bool shadows = false;
  std::optional<HostsOptions> hosts;  // run on cluster hosts (its `results` is filled in)
  LaunchOptions launch;               // single-host real runs
  // Single-host real runs: keep this machine's CPUs from idling while the cells run (KeepAwake).
  bool keep_awake = false;
  // What env.json records beside the experiment (argv, version, build, devices), asked only when a
  // new results folder is made (it may load the CUDA plugin).
  std::function<nlohmann::ordered_json()> env;
};

struct RunOutcome {
  std::string dir;
  Summary summary;
  std::size_t cells_done = 0;  // finished, this run and earlier ones
  std::size_t cells_total = 0;
  bool stopped = false;
  std::optional<Error> failed;   // the cell that failed (named), after which the run ended
  std::optional<Error> unsaved;  // why summary.json could not be written (a full disk): nothing after it was
  // A real run: the calibration recorded in calibration.json, or why there is none.
  std::optional<Calibration> calibration;
  std::string calibration_missing;
  // The results folder's lock (lock_results_dir), held as long as the outcome is: the caller's
  // report is drawn under it, so no second run of the folder starts in between.
  Fd lock;
};

// Runs `e` as described above. Errors before the first cell: a backend this host cannot run (a
// cuda workload without a device), the results folder, a resumed folder's experiment and mode, the
// scenarios' rates. A cell that fails ends the run with
// `failed` set; the summary of the finished cells is written either way.
Result<RunOutcome> run_experiment(const Experiment& e, RunOptions options, const std::atomic<bool>& stop);

}  // namespace contend::runner
