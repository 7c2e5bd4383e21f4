#pragma once
// Waiting for the processes of one cell (contend's workers, or a user's job's rank guards) and
// saying why a cell ended early: the first process that failed with the end of its log, a stop,
// the deadline with the processes still running, or the scenario player's failure. Private to
// the runner. Not thread-safe: the cell's owner thread.

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/child_process.h"
#include "contend/common/result.h"

namespace contend::runner {

// How a cell's processes are named in errors: "worker" or "rank", and the log process i wrote;
// where their logs say when each failed (rank guards' failure lines), which failed first and its
// code.
struct CellProcesses {
  std::string what;
  std::function<std::string(std::size_t)> log;
  std::function<std::optional<std::pair<std::size_t, int>>()> first_failed = {};
};

// "rank 1 exited with 3 (the first to fail<by>); the log PATH ends:\n...": process `index` of
// `names`, which failed first with `code` (by: how that was known, e.g. ", by the hosts' clocks").
std::string failed_first(const CellProcesses& names, std::size_t index, int code, const std::string& by = "");

// Waits until every process has ended: an error naming the first that failed (the others usually
// fail because it did, and their errors say so; by `first_failed` where given, else the first
// found), on `stop`, after `timeout` (naming those still running), or as soon as `invalid` says
// why the cell can no longer be measured. The caller ends what is left (the processes'
// destructors, or end_all).
Result<void> wait_processes(std::vector<ChildProcess>& processes, const CellProcesses& names,
                            std::chrono::seconds timeout, const std::atomic<bool>& stop,
                            const std::function<std::optional<Error>()>& invalid = {});

// Ends every process still running: the stop signal to all first, then each waited for (SIGKILL
// after its grace), so ending n processes takes one grace period, not n.
void end_all(std::vector<ChildProcess>& processes);

}  // namespace contend::runner
