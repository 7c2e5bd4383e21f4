#pragma once
// A run's results folder as the run writes it (results/results_dir.h keeps the folder's rules):
// where each cell's files go, the folder opened (new, with env.json, or resumed), the network's
// truth written for the workers, and the summary. Private to the runner's run/.

#include <map>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/cell_files.h"
#include "contend/runner/results/summary.h"
#include "contend/runner/run.h"
#include "contend/runner/truth/network.h"
#include "results/results_dir.h"

namespace contend::runner {

// "real" or "simulated", as env.json and a summary say it.
std::string mode_of(const RunOptions& o);

// The experiment as this run runs it: with RunOptions::repetitions or, resumed, the count the
// folder's run began with (resumed_repetitions), where either is set.
Result<Experiment> as_run(const Experiment& e, const RunOptions& o);

// The files of `cell` in the results folder `dir`: its iteration log, events log and log, the
// first repetition's traces, and the scenario's truth where its workers read it (needs_truth).
CellFiles files_of(const std::string& dir, const Experiment& e, const Cell& cell);

// The results folder: a new one (env.json, and a --simulate run's calibration, written) or the
// resumed one, checked to be of the same experiment, mode and files.
Result<std::string> open_results(const Experiment& e, const RunOptions& o);

// Each scenario's network, resolved once, written where the workers read it (--truth).
Result<void> write_truths(const std::string& dir, const Experiment& e, const std::vector<ScenarioNetwork>& truths);

// The summary of the cells finished in `done`, in the matrix's order, with what each sent over
// each shaped end (the repetitions' medians) where they recorded it.
Summary summary_of(const Experiment& e, const std::vector<Cell>& cells, const FinishedCells& done,
                   const std::string& mode);
// summary.json (with what the report needs of the experiment, `truths` each scenario's network,
// `cluster_hosts` on cluster hosts each fabric scenario's HostsOptions::fabric_hosts, else empty)
// and summary.csv.
Result<void> write_summary(const std::string& dir, const Experiment& e, const Summary& s,
                           const std::vector<ScenarioNetwork>& truths,
                           const std::vector<std::map<std::string, std::string>>& cluster_hosts);

}  // namespace contend::runner
