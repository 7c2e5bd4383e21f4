#pragma once
// An experiment (schema contend.experiment/1, docs/experiment-format.md): scenarios x schedules
// x repetitions of one workload, and the baseline schedule speedups are measured against.
// Parsed strictly: errors name the file, the JSON pointer and what was expected. Plain values.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/pipeline/exec/workload.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/pipeline/transport/transport.h"
#include "contend/runner/experiment/command_job.h"
#include "contend/runner/experiment/schedule_entry.h"

namespace contend::runner {

// The most repetitions a cell runs: an experiment's "repetitions", `run --repetitions`, `ab --rounds`.
inline constexpr int kMaxRepetitions = 1000;

// What every cell of the experiment runs (pipeline/exec/workload.h): the experiment file's
// "workload" object, decoded by the codec the workers and the simulator share.
using Workload = pipeline::Workload;

// A stretch of the scenario's clock every cell is measured over: the samples completed inside it
// (an iteration that straddles an end counts in proportion) over its length.
struct MeasureWindow {
  double from_s = 0;
  double to_s = 0;
};

struct Experiment {
  std::string name;
  std::string description;
  std::string source;  // the file
  std::string topology = "netns";
  std::vector<emulator::Scenario> scenarios;
  std::vector<std::string> scenario_files;  // as resolved, beside each scenario
  Workload workload;
  std::vector<ScheduleEntry> schedules;  // static schedules and policies (pipeline/policy/policy.h)
  int repetitions = 3;
  std::string baseline = "1f1b";  // the name of one of the schedules
  // "baseline_scenario": the scenario each cell's slowdown is against (its name; the same schedule
  // or variant there); empty: no slowdown.
  std::string baseline_scenario;

  std::optional<MeasureWindow> measure;  // unset: the iterations after the warm-up
  // A user's own job (command_job.h): set when the workload has a "command"; then `schedules` is empty,
  // the job's variants are the matrix's second axis, `baseline` names one of them and
  // `workload.stages` is its number of ranks.
  std::optional<CommandJob> job;
};

// One run: a scenario, a schedule (with its transport), a repetition.
struct Cell {
  int scenario = 0;  // index into Experiment::scenarios
  Spec schedule;
  int repetition = 0;
  std::string id;    // file-name safe and unique: "periodic.kfkb-k-2.r1"
  Spec transport;    // the entry's, else the workload's
  std::string name;  // the entry's name (ScheduleEntry::name), or a command job's variant's
  int variant = -1;  // a command job's: index into CommandJob::variants
  int entry = -1;    // contend's pipeline's: index into Experiment::schedules
};

// The schedule `cell` runs, resolved (`cell` is of contend's pipeline, not a command job's).
const pipeline::ScheduleChoice& schedule_of(const Experiment& e, const Cell& cell);

// Parses `text`; scenario paths are relative to `source`'s directory. Every schedule, backend and
// transport is parsed by its registry, every scenario must have `stages` nodes, and the baseline
// must be one of the schedules. A workload with a "command" is a user's job (command_job.h): "variants"
// in place of "schedules", one rank per node.
Result<Experiment> parse_experiment(const std::string& text, const std::string& source);
Result<Experiment> load_experiment(const std::string& path);
// The fingerprint of the files `e` was read from, its own and its scenarios' (JSON files as their
// keys and values without "description", whose prose changes no result), in hex: env.json's
// "files_fingerprint", so that a run is resumed (and contend ab keeps rounds) only with the files
// it began with.
std::string files_fingerprint(const Experiment& e);

// The matrix, scenario-major, then repetition, then schedule (or variant): each repetition runs
// every schedule, so the schedules alternate on the machine.
std::vector<Cell> expand(const Experiment& e);

}  // namespace contend::runner
