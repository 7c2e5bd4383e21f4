#pragma once
// What contend's runs leave on this host, surveyed for `contend emu status`: every run with a
// state file, readable or not, then every run with namespaces but no state file, each with its
// namespaces and the processes inside them (processes.h), so a run killed before it wrote its
// state, a damaged state file, a deleted scenario or an orphaned worker is still shown
// (teardown.h removes them). Thread-safe (no shared state).

#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/processes.h"
#include "contend/emulator/net/run_state.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

// One run as `contend emu status` shows it.
struct RunSurvey {
  std::string run;
  bool recorded = false;                // it has a state file (readable or not)
  std::optional<RunState> state;        // the state file, when readable
  std::optional<Scenario> scenario;     // its scenario, when the state and the scenario file read fine
  std::string problem;                  // why the state file or its scenario cannot be read, else ""
  std::vector<std::string> namespaces;  // its namespaces that exist now
  std::vector<NetnsProcess> processes;  // processes inside them
};

// Run `run`: from its state file when it has one, else whatever of it exists (an orphan).
RunSurvey survey_run(const std::string& run);
// Every run with a state file, then every run with namespaces but no state file, by name.
std::vector<RunSurvey> survey_runs();

}  // namespace contend::emulator
