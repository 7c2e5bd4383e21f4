#include "contend/runner/hosts/hosts.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/emulator/net/host_links.h"
#include "contend/pipeline/transport/tcp_transport.h"
#include "hosts/job_hosts.h"
#include "hosts/racks.h"
#include "job/job_log.h"
#include "real/cell_wait.h"

namespace contend::runner {
namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const auto end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) {
      return true;
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return false;
}

Result<int> playbook(const std::string& book, const HostsOptions& o, const std::string& vars_file,
                     const std::string& log, const std::atomic<bool>* stop) {
  std::vector<std::string> argv = {"ansible-playbook", "-i", o.inventory, o.ansible_dir + "/" + book};
  if (!vars_file.empty()) {
    argv.push_back("-e");
    argv.push_back("@" + vars_file);
  }
  for (const auto& v : o.extra_vars) {
    argv.push_back("-e");
    argv.push_back(v);
  }
  ChildOptions co;
  co.output_path = log;
  co.grace = std::chrono::milliseconds(10000);
  // The cell's token, which the workload role hands every worker as a file (0600, removed as the
  // worker starts; never on a command line).
  co.environment = {std::string(pipeline::kRunTokenVariable) + "=" + pipeline::new_run_token()};
  auto child = ChildProcess::spawn(argv, co);
  if (!child) {
    return child.error();
  }
  for (;;) {
    auto code = child->wait(std::chrono::milliseconds(100));
    if (code) {
      return *code;
    }
    if (stop != nullptr && stop->load()) {
      return child->terminate();
    }
  }
}

// Whether the transport asks for an environment (nccl: the role sets NCCL's on each host).
bool transport_environment(const Spec& transport) {
  const auto* kind = pipeline::transports().find(transport);
  return kind != nullptr && static_cast<bool>(kind->kind.environment);
}

// The variables of a cell of contend's own pipeline: the workers' options.
Result<nlohmann::json> pipeline_vars(const Experiment& e, const Cell& cell, const CellFiles& files) {
  if (schedule_of(e, cell).reads_truth) {
    return make_error(
        Errc::kUnsupported,
        "\"" + schedule_of(e, cell).spec.name() +
            "\" reads the scenario's truth on the player's clock, which is one host's: single-host runs only");
  }
  if (e.scenarios[cell.scenario].has_stalls()) {
    return make_error(Errc::kUnsupported, e.scenario_files[cell.scenario] +
                                              ": stalls are applied by the workers on the player's clock, which is "
                                              "one host's: single-host runs only");
  }
  // Ansible starts the workers host by host as its forks reach them, seconds apart on a busy
  // control machine or a large cluster: the first waits for the last for up to two minutes (the
  // single-host default of 30 s was passed under load).
  std::vector<std::string> args = worker_options(e, cell);
  args.insert(args.end(), {"--connect-timeout", "120s"});
  return nlohmann::json{{"contend_worker_args", args},
                        {"contend_trace", !files.trace_prefix.empty()},
                        {"contend_nccl", transport_environment(e.workload.transport)}};
}

// The variables of a command cell: each rank's command line and environment (job_hosts.h).
Result<nlohmann::json> command_vars(const Experiment& e, const Cell& cell) {
  if (e.job->output_rank != 0) {
    return make_error(Errc::kUnsupported,
                      e.source +
                          ": /workload/output_rank: on cluster hosts the output is read from rank 0, whose "
                          "host's clock times the scenario (its event log comes first)");
  }
  return job_hosts_vars(e, cell);
}

// For a command cell that failed: "rank 1 exited with 3 (the first to fail, by the hosts'
// clocks); the log ... ends: ...", from the rank logs collected; empty when none says it failed.
std::string first_rank_failed(const Experiment& e, const Cell& cell, const CellFiles& files) {
  const auto first =
      e.job ? first_failure(files.log, static_cast<int>(e.scenarios[cell.scenario].nodes.size())) : std::nullopt;
  if (!first) {
    return {};
  }
  const CellProcesses ranks{"rank", [&](std::size_t r) { return rank_log_path(files.log, static_cast<int>(r)); }};
  return failed_first(ranks, first->rank, first->failure.code, ", by the hosts' clocks") + "\n";
}

// On a fabric: the ranks' hosts (contend_rank_hosts: inventory hosts in rank order, those the
// scenario's placement picks) and the scenario host each inventory host stands for
// (contend_fabric_nodes: whose NIC link it shapes), from `hosts` (place_on_racks). Nothing on a
// chain: rank r runs on the r-th host of `nodes` (the roles' default).
nlohmann::json fabric_vars(const emulator::Scenario& s, const std::map<std::string, std::string>& hosts) {
  if (!s.has_fabric()) {
    return nlohmann::json::object();
  }
  const nlohmann::json ranks = rank_inventory_hosts(s, hosts);
  nlohmann::json nodes = nlohmann::json::object();
  for (const auto& [node, host] : hosts) {
    nodes[host] = node;
  }
  return nlohmann::json{{"contend_rank_hosts", ranks}, {"contend_fabric_nodes", nodes}};
}

// What a cluster cannot play of a fabric scenario's event `ev`: "" when it can (a host's NIC rate).
std::string unplayable_on_hosts(const emulator::Scenario& s, const emulator::Event& ev) {
  if (std::holds_alternative<emulator::FlowStart>(ev.action) || std::holds_alternative<emulator::FlowStop>(ev.action)) {
    return "starts background traffic: on a cluster the other tenants are its own (run it in namespaces)";
  }
  if (std::holds_alternative<emulator::SetLinkState>(ev.action)) {
    return "takes a link down or up: contend never takes a cluster's ports down";
  }
  if (std::holds_alternative<emulator::SetStall>(ev.action)) {
    return "stalls a link: stalls play on one host's clock (single-host runs only)";
  }
  const auto& rate = std::get<emulator::SetRate>(ev.action);
  const emulator::LinkSpec* l = s.find_link(rate.link);
  if (l != nullptr && s.is_switch(l->from) && s.is_switch(l->to)) {
    return "changes the rate of " + rate.link + ", a link between switches: the cluster's own, which contend does " +
           "not shape (it shapes the hosts' NICs)";
  }
  return "";
}

// A fabric scenario cluster hosts can play: its hosts' link rates change and nothing else, each
// host has one link, to its leaf.
Result<void> check_playable(const emulator::Scenario& s, const std::string& file) {
  for (const auto* events : {&s.events, &s.iteration_events}) {
    for (const emulator::Event& ev : *events) {
      if (const std::string why = unplayable_on_hosts(s, ev); !why.empty()) {
        return make_error(Errc::kUnsupported, file + ": " + ev.origin + " " + why +
                                                  "; on cluster hosts a fabric scenario changes its hosts' link " +
                                                  "rates only");
      }
    }
  }
  for (const std::string& host : s.nodes) {
    if (auto ok = emulator::check_cluster_host(s, host); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> rank_inventory_hosts(const emulator::Scenario& s,
                                              const std::map<std::string, std::string>& hosts) {
  std::vector<std::string> out;
  for (std::size_t r = 0; r < s.rank_hosts(); ++r) {
    out.push_back(hosts.at(s.nodes[r]));
  }
  return out;
}

Result<void> place_on_racks(const Experiment& e, HostsOptions& o) {
  o.fabric_hosts.assign(e.scenarios.size(), {});
  std::optional<Racks> racks;
  for (std::size_t i = 0; i < e.scenarios.size(); ++i) {
    const emulator::Scenario& s = e.scenarios[i];
    if (!s.has_fabric()) {
      continue;
    }
    if (auto ok = check_playable(s, e.scenario_files[i]); !ok) {
      return ok;
    }
    if (!racks) {
      auto read = read_racks(o.inventory);
      if (!read) {
        return read.error();
      }
      racks = std::move(*read);
    }
    auto hosts = hosts_on_racks(s, *racks, o.inventory);
    if (!hosts) {
      return hosts.error();
    }
    o.fabric_hosts[i] = std::move(*hosts);
  }
  return {};
}

Result<void> run_cell_hosts(const Experiment& e, const Cell& cell, const CellFiles& files, const HostsOptions& o,
                            const std::atomic<bool>& stop) {
  auto vars = e.job ? command_vars(e, cell) : pipeline_vars(e, cell, files);
  if (!vars) {
    return vars.error();
  }
  if (!on_path("ansible-playbook")) {
    return make_error(Errc::kNotFound,
                      "hosts mode runs ansible-playbook, which is not on PATH "
                      "(apt-get install ansible-core)");
  }
  vars->update(fabric_vars(e.scenarios[cell.scenario], o.fabric_hosts.at(cell.scenario)));
  vars->update({{"contend_cell", cell.id},
                {"contend_scenario", e.scenario_files[cell.scenario]},
                {"contend_results", o.results}});
  const std::string vars_file = o.results + "/runs/" + cell.id + ".vars.json";
  if (auto ok = write_file_atomic(vars_file, vars->dump(2)); !ok) {
    return ok.error();
  }
  const std::string log = files.log + ".ansible";
  auto code = playbook("experiment.yml", o, vars_file, log, &stop);
  if (!code) {
    return code.error();
  }
  if (*code != 0) {
    // experiment.yml tears down in its own `always`; this covers a playbook stopped mid-way.
    (void)playbook("teardown.yml", o, "", log + ".teardown", nullptr);
    if (stop.load()) {
      return make_error(Errc::kIo, "stopped");
    }
    return make_error(Errc::kIo, first_rank_failed(e, cell, files) + "ansible-playbook experiment.yml exited with " +
                                     std::to_string(*code) + "; " + log + " ends:\n" + file_tail(log, 1500));
  }
  return {};
}

}  // namespace contend::runner
