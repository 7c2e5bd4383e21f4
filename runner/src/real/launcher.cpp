#include "contend/runner/real/launcher.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <thread>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/units.h"
#include "contend/pipeline/transport/tcp_transport.h"
#include "real/cell_wait.h"
#include "real/namespace_cell.h"
#include "real/traffic.h"

namespace contend::runner {
namespace {

// How long a worker waits for a peer's tensor: longer than `contend worker`'s default, since a
// loaded machine delays a cell's ranks unevenly (the cell's own timeout ends a hung one).
constexpr const char* kWorkerPeerTimeout = "120s";

}  // namespace

namespace {

// On a fabric, each rank's host's first NIC (the end of its first link to a switch): every other
// host reaches it through the fabric's routes. kInvalidArgument naming a host with no such link.
Result<std::vector<RankEnd>> fabric_rank_ends(const emulator::Scenario& s, const emulator::TopologyPlan& plan) {
  std::vector<RankEnd> out;
  for (std::size_t r = 0; r < s.rank_hosts(); ++r) {
    for (const auto& l : plan.links) {
      const auto* end = l.from.node == s.nodes[r] ? &l.from : l.to.node == s.nodes[r] ? &l.to : nullptr;
      const auto* peer = end == &l.from ? &l.to : &l.from;
      if (end != nullptr && s.is_switch(peer->node)) {
        out.push_back({emulator::strip_prefix_length(end->address), end->ifname});
        break;
      }
    }
    if (out.size() != r + 1) {
      return make_error(Errc::kInvalidArgument, "host " + s.nodes[r] + " runs rank " + std::to_string(r) +
                                                    " but has no link to a switch: on a fabric a rank is reached " +
                                                    "at its NIC");
    }
  }
  return out;
}

}  // namespace

Result<std::vector<RankEnd>> rank_ends(const emulator::Scenario& s, const emulator::TopologyPlan& plan) {
  if (s.has_fabric()) {
    return fabric_rank_ends(s, plan);
  }
  std::vector<RankEnd> out;
  for (std::size_t r = 0; r < s.nodes.size(); ++r) {
    const std::string& other = s.nodes[r == 0 ? 1 : r - 1];
    RankEnd found;
    for (const auto& l : plan.links) {
      for (const auto* end : {&l.from, &l.to}) {
        const auto* peer = end == &l.from ? &l.to : &l.from;
        if (end->node == s.nodes[r] && peer->node == other) {
          found = {emulator::strip_prefix_length(end->address), end->ifname};
        }
      }
    }
    if (found.address.empty()) {
      return make_error(Errc::kInvalidArgument, "no link between " + s.nodes[r] + " and " + other);
    }
    out.push_back(std::move(found));
  }
  return out;
}

std::vector<std::string> worker_options(const Experiment& e, const Cell& cell) {
  Workload w = e.workload;
  w.transport = cell.transport;
  return {"--workload", workload_json(w).dump(), "--schedule", cell.schedule.str(), "--timeout", kWorkerPeerTimeout};
}

std::vector<std::vector<std::string>> worker_commands(const Experiment& e, const Cell& cell,
                                                      const std::vector<std::string>& endpoints, const CellFiles& files,
                                                      const LaunchOptions& o, double scenario_start_s) {
  const Workload& w = e.workload;
  std::string peers;
  for (const auto& a : endpoints) {
    peers += (peers.empty() ? "" : ",") + a;
  }
  const std::vector<std::string> common = worker_options(e, cell);
  std::vector<std::vector<std::string>> out;
  for (int r = 0; r < w.stages; ++r) {
    std::vector<std::string> argv = {
        o.contend, "worker", "--rank",    std::to_string(r), "--world-size", std::to_string(w.stages),
        "--peers", peers,    "--metrics", files.metrics};
    argv.insert(argv.end(), common.begin(), common.end());
    if (!files.trace_prefix.empty()) {
      argv.push_back("--trace");
      argv.push_back(files.trace_prefix + ".rank" + std::to_string(r) + ".json");
    }
    if (!files.truth.empty()) {
      argv.push_back("--truth");
      argv.push_back(files.truth);
      argv.push_back("--scenario-start");
      argv.push_back(std::to_string(scenario_start_s));
    }
    out.push_back(std::move(argv));
  }
  return out;
}

std::vector<std::string> worker_environment(const Spec& transport, const emulator::TopologyPlan& plan,
                                            const std::string& node) {
  const auto* kind = pipeline::transports().find(transport);
  if (kind == nullptr || !kind->kind.environment) {
    return {};
  }
  std::vector<std::string> ifnames;
  std::string netns;
  for (const auto& l : plan.links) {
    for (const auto* end : {&l.from, &l.to}) {
      if (end->node == node) {
        ifnames.push_back(end->ifname);
        netns = end->netns;
      }
    }
  }
  return kind->kind.environment(ifnames, netns);
}

namespace {

// Starts every command, their output in `log`, with a new token for the run in their environment
// (their greetings carry it: a connection without it is a stranger's).
Result<std::vector<ChildProcess>> spawn_workers(const std::vector<std::vector<std::string>>& commands,
                                                const std::string& log) {
  std::vector<ChildProcess> workers;
  const std::string token = std::string(pipeline::kRunTokenVariable) + "=" + pipeline::new_run_token();
  for (const auto& argv : commands) {
    ChildOptions co;
    co.output_path = log;
    co.environment = {token};
    co.own_group = true;
    auto child = ChildProcess::spawn(argv, co);
    if (!child) {
      return child.error();
    }
    workers.push_back(std::move(*child));
  }
  return workers;
}

// One worker per stage in its node's namespace, with its transport's environment; their output
// in files.log.
Result<std::vector<ChildProcess>> start_workers(const Experiment& e, const Cell& cell, const CellFiles& files,
                                                const LaunchOptions& o, const emulator::TopologyPlan& plan,
                                                const std::vector<std::string>& addresses,
                                                const std::vector<std::vector<std::string>>& reach, double start_s) {
  std::vector<std::string> endpoints;
  for (const auto& a : addresses) {
    endpoints.push_back(a + ":" + std::to_string(o.port));
  }
  auto commands = worker_commands(e, cell, endpoints, files, o, start_s);
  for (int r = 0; r < e.workload.stages; ++r) {
    commands[r].insert(commands[r].end(), reach[r].begin(), reach[r].end());
  }
  for (int r = 0; r < e.workload.stages; ++r) {
    std::vector<std::string> argv = {"ip", "netns", "exec", plan.nodes[r].second};
    if (const auto env = worker_environment(cell.transport, plan, plan.nodes[r].first); !env.empty()) {
      argv.push_back("env");
      argv.insert(argv.end(), env.begin(), env.end());
    }
    commands[r].insert(commands[r].begin(), argv.begin(), argv.end());
  }
  return spawn_workers(commands, files.log);
}

// The workers share one log.
CellProcesses workers_of(const CellFiles& files) {
  return {"worker", [log = files.log](std::size_t) { return log; }};
}

}  // namespace

namespace {

// contend's workers, one per stage in its node's namespace, reaching each other over the links.
class PipelineCell : public NamespaceCell {
 public:
  PipelineCell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o)
      : e_(e), cell_(cell), files_(files), o_(o) {}

  Result<void> prepare(const emulator::TopologyPlan& plan) override {
    auto ends = rank_ends(e_.scenarios[cell_.scenario], plan);
    if (!ends) {
      return ends.error();
    }
    for (const RankEnd& end : *ends) {
      addresses_.push_back(end.address);
    }
    reach_ = reach_options(exchange_pairs(e_.scenarios[cell_.scenario], schedule_of(e_, cell_)), plan, o_.port);
    return {};
  }

  Result<std::vector<ChildProcess>> start(const emulator::TopologyPlan& plan, double zero_s) override {
    return start_workers(e_, cell_, files_, o_, plan, addresses_, reach_, zero_s);
  }

  CellProcesses names() const override { return workers_of(files_); }
  std::chrono::seconds timeout() const override { return o_.timeout; }

 private:
  const Experiment& e_;
  const Cell& cell_;
  const CellFiles& files_;
  const LaunchOptions& o_;
  std::vector<std::string> addresses_;           // each rank's
  std::vector<std::vector<std::string>> reach_;  // each rank's --reach options
};

}  // namespace

Result<void> run_cell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o,
                      const std::atomic<bool>& stop) {
  PipelineCell kind(e, cell, files, o);
  return run_in_namespaces(e, cell, files, kind, stop);
}

Result<void> run_cell_loopback(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o,
                               const std::atomic<bool>& stop) {
  std::vector<std::string> endpoints;
  for (int r = 0; r < e.workload.stages; ++r) {
    endpoints.push_back("127.0.0.1:" + std::to_string(o.port + r));
  }
  auto workers = spawn_workers(worker_commands(e, cell, endpoints, files, o, 0), files.log);
  if (!workers) {
    return workers.error();
  }
  return wait_processes(*workers, workers_of(files), o.timeout, stop);
}

}  // namespace contend::runner
