#include "contend/emulator/net/leftovers.h"

#include <algorithm>
#include <set>

#include "contend/emulator/net/topology.h"

namespace contend::emulator {

RunSurvey survey_run(const std::string& run) {
  RunSurvey s;
  s.run = run;
  s.namespaces = run_namespaces(run);
  auto state = read_run_state(run);
  s.recorded = !state || state->has_value();
  if (!state) {
    s.problem = "its state file is damaged: " + state.error().message;
  } else if (*state) {
    s.state = **state;
    auto scenario = load_scenario(s.state->scenario);
    if (scenario) {
      s.scenario = std::move(*scenario);
    } else {
      s.problem = "its scenario cannot be read: " + scenario.error().message;
    }
  }
  s.processes = processes_in(s.namespaces);
  return s;
}

std::vector<RunSurvey> survey_runs() {
  std::vector<RunSurvey> out;
  std::set<std::string> seen;
  for (const std::string& run : list_runs()) {
    out.push_back(survey_run(run));
    seen.insert(run);
  }
  for (const std::string& ns : contend_namespaces()) {
    const std::string run = *netns_run(ns);
    if (seen.insert(run).second) {
      out.push_back(survey_run(run));
    }
  }
  return out;
}

}  // namespace contend::emulator
