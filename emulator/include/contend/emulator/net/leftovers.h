#pragma once
// What contend's runs leave on this host, found by name and by namespace rather than only through
// their state files: every namespace named contend-*, every process with a thread inside one, and
// every run with a state file, readable or not. `contend emu status` lists it and `contend emu down
// --all` removes it, so a run killed before it wrote its state, a damaged state file, a deleted
// scenario or an orphaned worker is still found. Thread-safe (no shared state).

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/run_state.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct NetnsProcess {
  pid_t pid = 0;
  std::string netns;    // the contend namespace one of its threads is in
  std::string command;  // its command line, arguments joined by spaces, at most 120 characters
};

// Every namespace whose name starts with "contend-" (in /run/netns), sorted.
std::vector<std::string> contend_namespaces();
// Those of run `run` that exist: its switch contend-<run> and its nodes contend-<run>.*, sorted.
std::vector<std::string> run_namespaces(const std::string& run);

// The processes one of whose threads is in one of `namespaces` (each namespace's device and inode
// against every /proc/PID/task/TID/ns/net), never the calling process; sorted by PID. Namespaces
// that do not exist are skipped.
std::vector<NetnsProcess> processes_in(const std::vector<std::string>& namespaces);
// Ends `processes`: SIGTERM to each that is still in its namespace, SIGKILL after `grace` to those
// still running, then waits up to `grace` again. Signals go through pidfds opened after the
// namespace is checked, so a PID reused meanwhile by another process is never signalled. Returns
// how many ended.
std::size_t end_processes(const std::vector<NetnsProcess>& processes,
                          std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

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

struct CleanupReport {
  std::size_t runs = 0;        // state files removed, damaged ones included
  std::size_t namespaces = 0;  // namespaces removed
  std::size_t processes = 0;   // processes ended
};

// `contend emu down --all`: ends every process inside a contend namespace, tears down every run
// with a state file (tear_down_run), removes every other contend namespace and the state folder's
// stale temporary files. Tries everything; returns what it removed, or the first failure.
Result<CleanupReport> tear_down_all();

}  // namespace contend::emulator
