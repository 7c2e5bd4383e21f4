#pragma once
// Flow job files (schema contend.flow-job/1, docs/flows.md): named background flows with a start,
// a duration and an optional on/off pattern, run by `contend flows JOB --run NAME` against a run
// that is up, through the scenario player. Parsing and pattern expansion are pure.

#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct FlowJob {
  std::string source;  // the job file
  double duration_s = 0;
  std::vector<Event> events;  // flow starts and stops, sorted by time, all before duration_s
};

// Parses a job whose flows run between `scenario`'s nodes. Errors as the scenario's: file, JSON
// pointer, expectation; unknown keys are errors.
Result<FlowJob> parse_flow_job(const std::string& text, const std::string& source, const Scenario& scenario);

// The job as a scenario the player plays (player.h): the run's nodes and links, the job's file,
// duration and flow events.
Scenario job_scenario(const FlowJob& job, const Scenario& run);

}  // namespace contend::emulator
