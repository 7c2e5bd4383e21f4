#include "contend/emulator/net/teardown.h"

#include <algorithm>

#include "contend/common/fd.h"
#include "contend/emulator/net/processes.h"
#include "contend/emulator/net/topology.h"

namespace contend::emulator {
namespace {

// The namespaces of `a` and those of `b` that `a` lacks, in that order.
std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  for (const std::string& x : b) {
    if (std::find(a.begin(), a.end(), x) == a.end()) {
      a.push_back(x);
    }
  }
  return a;
}

// The state folder's files that a writer killed half-way left: <run>.json.new.<pid> and
// write_file_atomic's <name>.tmp.<pid>.<n>.
std::vector<std::string> stale_state_files() {
  std::vector<std::string> out;
  for (const std::string& name : folder_entries(state_dir())) {
    if (name.find(".json.new.") != std::string::npos || name.find(".json.tmp.") != std::string::npos) {
      out.push_back(state_dir() + "/" + name);
    }
  }
  return out;
}
}  // namespace

Result<TearDownReport> tear_down_run(const std::string& run, const std::vector<std::string>& planned) {
  TearDownReport report;
  auto state = read_run_state(run);
  if (!state) {
    report.damaged_state = state.error().message;  // removed below, after what can be found
  }
  const bool recorded_state = state && state->has_value();
  std::vector<std::string> recorded;
  for (const std::string& ns : recorded_state ? (*state)->namespaces : planned) {
    (run_made(run, ns) ? recorded : report.ignored).push_back(ns);
  }
  // What the state lists and every other namespace of the run's name (one killed before its state).
  const std::vector<std::string> namespaces = joined(run_namespaces(run), recorded);
  report.processes = end_processes_in(namespaces);
  auto removed = remove_namespaces(namespaces);
  if (!removed) {
    return removed.error();
  }
  report.namespaces = *removed;
  if (auto ok = remove_run_state(run); !ok) {
    return ok.error();
  }
  return report;
}

Result<CleanupReport> tear_down_all(bool orphans) {
  CleanupReport report;
  Result<void> first;
  const auto note = [&first](const Result<void>& r) { first = first.ok() ? r : first; };
  const std::vector<std::string> runs = list_runs();
  std::vector<std::string> mine;  // the recorded runs' namespaces, with the orphans when asked
  for (const std::string& ns : contend_namespaces()) {
    const bool recorded = std::find(runs.begin(), runs.end(), *netns_run(ns)) != runs.end();
    (recorded || orphans ? mine : report.orphans_left).push_back(ns);
  }
  // Processes first, all at once: each would keep its namespace alive after its name is gone.
  report.processes = end_processes_in(mine);
  for (const std::string& run : runs) {
    auto torn = tear_down_run(run);
    if (!torn) {
      note(torn.error());
      continue;
    }
    report.runs++;
    report.namespaces += torn->namespaces;
    report.processes += torn->processes;
  }
  auto removed = remove_namespaces(orphans ? contend_namespaces() : std::vector<std::string>{});
  if (!removed) {
    note(removed.error());
  } else {
    report.namespaces += *removed;
  }
  for (const std::string& path : stale_state_files()) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      note(errno_error(errno, "unlink " + path));
    }
  }
  if (!first) {
    return first.error();
  }
  return report;
}

}  // namespace contend::emulator
