#pragma once
// A simulated cell written as a real one is (so reports read both alike). Private to the runner.
// Thread-safe (no shared state).

#include <string>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/cell_files.h"
#include "contend/runner/simulated/simulate.h"
#include "contend/runner/truth/network.h"

namespace contend::runner {

// runs/CELL.jsonl (rank 0's contend.iteration/1 lines, "backend": "simulated"), events/CELL.jsonl
// (the scenario's events as the player logs them, each applied when scheduled, and on a fabric the
// flows' summaries the model predicts: simulated_tenants.h) and, when `trace_path` is set, the last
// iteration's Chrome trace. Errors name the file.
Result<void> write_simulated_cell(const CellFiles& files, const std::string& trace_path, const Experiment& e,
                                  const Cell& cell, const SimCell& sim);

}  // namespace contend::runner
