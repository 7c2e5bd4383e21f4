#pragma once
// What `contend emu up` leaves behind, recorded so that `contend emu down` can remove it after a
// crash: one JSON file per run (schema contend.emu-state/1) in $CONTEND_STATE_DIR, by default
// /run/contend. Thread-safe (no shared state).

#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct RunState {
  std::string run;
  std::string scenario;                 // absolute path of the scenario file
  std::vector<std::string> namespaces;  // everything the run created lives in these
};

std::string state_dir();
// Records `state` in a new file (creating the folder), before the run builds anything: a run
// killed half-way through `up` is found from it. Fails with kInvalidArgument ("run X is up
// already") when the run has a state file, so no two processes own one run. Errors name the path.
Result<void> write_run_state(const RunState& state);
// The run's state, or nullopt when there is none; kParse naming the file when it is damaged.
Result<std::optional<RunState>> read_run_state(const std::string& run);
Result<void> remove_run_state(const std::string& run);
// The scenario of a run that is up: kNotFound ("run X is not up ...; `contend emu up SCENARIO`
// first") without a state file, else the scenario file's own errors.
Result<Scenario> load_run_scenario(const std::string& run);

// Runs with a state file (readable or not), sorted; only files named as a run can be (<run>.json).
std::vector<std::string> list_runs();

}  // namespace contend::emulator
