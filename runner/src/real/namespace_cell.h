#pragma once
// The one life of a cell run in network namespaces on this host, whatever runs in it: the
// scenario's network up, the events log opened, the player started at the scenario's time 0, the
// cell's processes started and waited for, every one of them ended, the play finished. A kind of
// cell (contend's workers: launcher.cpp; a user's job: job/job_cell.cpp) says only what differs.
// Private to the runner. Not thread-safe: one cell at a time.

#include <atomic>
#include <chrono>
#include <vector>

#include "contend/common/child_process.h"
#include "contend/common/result.h"
#include "contend/emulator/net/topology.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/cell_files.h"
#include "real/cell_wait.h"

namespace contend::runner {

// What a kind of cell does in the network once it is up.
class NamespaceCell {
 public:
  virtual ~NamespaceCell() = default;
  // Before the player starts: what the processes need of the network (addresses, hosts files).
  virtual Result<void> prepare(const emulator::TopologyPlan& plan) = 0;
  // Starts the processes, the scenario's time 0 being `zero_s` on the steady clock. On failure,
  // what it started is ended.
  virtual Result<std::vector<ChildProcess>> start(const emulator::TopologyPlan& plan, double zero_s) = 0;
  // How errors name them, and which failed first.
  virtual CellProcesses names() const = 0;
  // How long they may run.
  virtual std::chrono::seconds timeout() const = 0;
  // Once they ended and the play finished well: whether what they did may be published.
  virtual Result<void> finish(const emulator::TopologyPlan& /*plan*/) { return {}; }
};

// Runs `cell` of `e` with `kind`'s processes as above, then `kind`'s finish(). Everything created is removed before it
// returns, also on failure and on `stop`. Errors: kPermission without CAP_NET_ADMIN, what `kind`
// says, the first process to fail with the end of its log, the player's failure, kTimeout, kIo
// "stopped".
Result<void> run_in_namespaces(const Experiment& e, const Cell& cell, const CellFiles& files, NamespaceCell& kind,
                               const std::atomic<bool>& stop);

}  // namespace contend::runner
