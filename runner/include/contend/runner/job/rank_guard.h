#pragma once
// The guard of one rank of a user's job (`contend job-rank`, run by the runner in the rank's
// node namespace): it starts the rank's command, writes every line of its stdout and stderr to
// the rank log as it reads it, timed on the steady clock (job_log.h), and owns the rank's whole
// process tree: it is a child subreaper, so whatever the command starts stays below it, and when
// the command ends, when the guard is told to stop (SIGTERM, SIGINT) or when its own parent dies
// (the runner killed: a parent-death signal), every process below it is ended, SIGKILL after
// `grace`. When the command fails by itself, the guard logs it at once (job_log.h's failure_line).
// Not thread-safe: one guard per process.

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace contend::runner {

struct RankGuardOptions {
  std::vector<std::string> command;       // argv; argv[0] searched in PATH
  std::string log;                        // the rank log, appended to (created 0644)
  std::string working_dir;                // empty: the guard's own
  std::chrono::milliseconds grace{1500};  // SIGTERM to SIGKILL, for the tree
};

// Runs the command as above until it ends or `stop` is set. Returns its exit code (128 + signal
// when it was killed by one), 127 when it could not be started (the reason in the log and on
// stderr), or 130 when stopped.
int run_rank_guard(const RankGuardOptions& options, const std::atomic<bool>& stop);

}  // namespace contend::runner
