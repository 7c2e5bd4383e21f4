#pragma once
// Running one cell of an experiment for real on this host: the scenario's nodes as network
// namespaces with shaped links (emulator), the scenario player and its background flows on a
// thread, and one `contend worker` process per stage inside its node's namespace. Everything it
// creates is removed before it returns, also on failure and when `stop` is set; a run state is
// recorded meanwhile so `contend emu down --run NAME` can clean up after a crash.
// Needs CAP_NET_ADMIN (kPermission otherwise). Not thread-safe: one cell at a time.

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/topology.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/cell_files.h"
#include "contend/runner/truth/network.h"

namespace contend::runner {

struct LaunchOptions {
  std::string contend;                // the contend binary the workers run
  std::chrono::seconds timeout{900};  // a cell taking longer fails
  int port = 29500;                   // every worker listens on its own address at this port
};

// Where rank r of a cell is reached: its node's end of the link from node r-1 (node 0: of the link
// to node 1), its address ("198.18.0.1") and that link's interface in its namespace; on a fabric,
// its host's first NIC (the link to its leaf), which every host reaches through the fabric.
struct RankEnd {
  std::string address;
  std::string ifname;
};
// kInvalidArgument naming the nodes when such a link is missing.
Result<std::vector<RankEnd>> rank_ends(const emulator::Scenario& s, const emulator::TopologyPlan& plan);

// The options every worker of `cell` gets: its workload as the codec writes it (`--workload JSON`,
// with the cell's transport), its schedule, the peer timeout; what hosts mode hands to ansible/
// with rank and peers left to it.
std::vector<std::string> worker_options(const Experiment& e, const Cell& cell);

// The workers' command lines for `cell`, rank by rank (without the `ip netns exec` prefix), rank
// r listening at endpoints[r] ("198.18.0.1:29500").
std::vector<std::vector<std::string>> worker_commands(const Experiment& e, const Cell& cell,
                                                      const std::vector<std::string>& endpoints, const CellFiles& files,
                                                      const LaunchOptions& options, double scenario_start_s);

// The environment of the worker on `node` that its transport asks for (TransportKind::environment,
// given the node's link interfaces and its namespace as host id); empty for most transports.
// "KEY=VALUE" items.
std::vector<std::string> worker_environment(const Spec& transport, const emulator::TopologyPlan& plan,
                                            const std::string& node);

// Runs `cell` as described above. Errors: kPermission without CAP_NET_ADMIN, a worker's failure
// with the end of its log, kTimeout, kIo "stopped" when `stop` was set.
Result<void> run_cell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& options,
                      const std::atomic<bool>& stop);

// Runs `cell`'s workers here without namespaces or shaping: rank r listens on 127.0.0.1 at
// options.port + r, over loopback (no root). Errors as run_cell's.
Result<void> run_cell_loopback(const Experiment& e, const Cell& cell, const CellFiles& files,
                               const LaunchOptions& options, const std::atomic<bool>& stop);

}  // namespace contend::runner
