#pragma once
// A real run's calibration.json (simulated/calibration.h), from the baseline's finished cells.
// Private to the runner's run/.

#include <map>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/iteration_log.h"
#include "contend/runner/results/summary.h"
#include "contend/runner/simulated/calibration.h"
#include "contend/runner/truth/network.h"

namespace contend::runner {

// Fits and writes `dir`/calibration.json from the baseline's finished cells: their iteration logs
// as this run read them (`logs`, by cell id; a cell finished by an earlier run is read here), their
// start on the scenario's clock, and each scenario's median (`summary`). kUnsupported for a user's
// job (not contend's pipeline, which the simulator models).
Result<Calibration> record_calibration(const Experiment& e, const std::string& dir, const std::vector<Cell>& cells,
                                       const std::map<std::string, double>& done, const Summary& summary,
                                       const std::vector<ScenarioNetwork>& truths,
                                       const std::map<std::string, IterationLog>& logs);

}  // namespace contend::runner
