#pragma once
// Running one cell of a command experiment (a user's job, experiment/command_job.h) for real on this host: the
// scenario's network as for contend's own workers (the one cell skeleton, real/namespace_cell), the scenario player on
// its thread, and in each node's namespace one `contend job-rank` guard (rank_guard.h) running the rank's command with
// its environment, its output timestamped into the rank's log (runs/ID.rankR.log). Each namespace's hosts file maps
// this machine's hostname and every node's name to the node addresses, so programs that resolve them (gloo, Open MPI)
// use the links. When a rank fails, the cell times out, the player fails or `stop` is set, every rank's process tree is
// ended; everything created is removed before it returns. Needs CAP_NET_ADMIN. Not thread-safe: one cell at a time.

#include <atomic>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/real/launcher.h"
#include "results/link_bytes.h"

namespace contend::runner {

// Runs `cell` of `e` (e.job set) as described above; `files.metrics` and `files.truth` are not
// used. Errors: kPermission without CAP_NET_ADMIN, a template that does not expand, the first
// rank to fail with how it ended and the end of its log, kTimeout naming the ranks still running,
// kIo "stopped".
Result<void> run_job_cell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& options,
                          const std::atomic<bool>& stop);

// The hosts file of `node`'s namespace: localhost, this machine's hostname and the node's own
// name at its address, every other node's name at its address.
std::string job_hosts_file(const std::string& hostname, const std::string& node, const std::vector<std::string>& nodes,
                           const std::vector<std::string>& addresses);

// Whether the ranks of a cell of `job` on `s` sent what its steps need over the links (`ports`,
// read from the cell's events log): kInvalidArgument naming the bytes, the steps and the paths
// around the links when a job of more than one rank sent less than its min_link_bytes_per_step
// for each step it had to take (warmup and steps), or nothing; ok when background flows share
// ends whose counters cannot tell their bytes from the job's (said on stderr).
Result<void> check_links_carried(const CommandJob& job, const emulator::Scenario& s,
                                 const std::vector<PortBytes>& ports);

// Pairs of ranks whose nodes share no link in `s`: they cannot reach each other (only link
// neighbours are routed), said before a run ("n0 and n2"). Empty for a full mesh.
std::vector<std::string> unlinked_rank_pairs(const emulator::Scenario& s);

}  // namespace contend::runner
