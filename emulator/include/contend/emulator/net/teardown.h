#pragma once
// Removing what contend's runs made on this host: one run (its processes, namespaces and state
// file), or everything (`contend emu down --all`). Thread-safe (no shared state).

#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/run_state.h"

namespace contend::emulator {

struct TearDownReport {
  std::size_t namespaces = 0;        // namespaces removed
  std::size_t processes = 0;         // processes ended inside them
  std::string damaged_state;         // why the state file could not be read; "" when it could, or there was none
  std::vector<std::string> ignored;  // namespaces the state listed that the run could not have made: left alone
};

// Tears run `run` down, also after a crash: ends every process inside its namespaces
// (end_processes_in, leftovers.h; never the caller), removes the namespaces its state file records
// (else `planned`, those its scenario would make) and every other one named contend-<run> or
// contend-<run>.* through remove_namespaces (topology.h), then its state file, also a damaged
// one. Only namespaces the run could have made (run_made): any other name a state file lists is
// left alone, in `ignored`. What `contend emu down` and the end of a `play` or a runner's cell call.
Result<TearDownReport> tear_down_run(const std::string& run, const std::vector<std::string>& planned = {});

struct CleanupReport {
  std::size_t runs = 0;                     // state files removed, damaged ones included
  std::size_t namespaces = 0;               // namespaces removed
  std::size_t processes = 0;                // processes ended
  std::vector<std::string> orphans_left{};  // contend namespaces of no run recorded here, left
};

// `contend emu down --all`: tears down every run with a state file in this state folder
// (tear_down_run: its processes, namespaces and state) and the folder's stale temporary files;
// with `orphans`, also ends the processes in, and removes, every other contend namespace (runs
// recorded in another state folder, another user's, or killed before their state), which it
// otherwise leaves and names. Tries everything; returns what it removed, or the first failure.
Result<CleanupReport> tear_down_all(bool orphans);

}  // namespace contend::emulator
