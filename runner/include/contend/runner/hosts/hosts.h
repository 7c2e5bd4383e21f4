#pragma once
// Hosts mode: one cell of an experiment on cluster hosts, through the Ansible playbooks in
// ansible/ (experiment.yml shapes each host's interface per peer, or its NIC on a fabric, runs one
// worker per rank's host: the inventory's `nodes` in order, or on a fabric the hosts the scenario's
// placement picks from the inventory's racks, or a command experiment's rank through `contend job-rank`
// (hosts/job_hosts.h), and collects into the same results layout as the single-host mode).
// Needs ansible-playbook on PATH (kNotFound otherwise). Not thread-safe: one cell at a time.

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/real/launcher.h"

namespace contend::runner {

struct HostsOptions {
  std::string inventory;                // an Ansible inventory with a `nodes` group in pipeline order
  std::string ansible_dir;              // the folder with experiment.yml and teardown.yml
  std::string results;                  // the results folder (absolute)
  std::vector<std::string> extra_vars;  // more -e arguments (tests: contend_bin, contend_netns)
  // Filled by place_on_racks, one per scenario of the experiment: the inventory host each host of
  // a fabric stands for (empty for a chain).
  std::vector<std::map<std::string, std::string>> fabric_hosts;
};

// The inventory host that stands for each rank's scenario host, in rank order (`hosts`: one
// scenario's HostsOptions::fabric_hosts).
std::vector<std::string> rank_inventory_hosts(const emulator::Scenario& s,
                                              const std::map<std::string, std::string>& hosts);

// Before any cell, each fabric scenario of `e` (docs/scenario-format.md#fabrics) placed on the
// inventory's racks, read once (hosts/racks.h), into o.fabric_hosts. On cluster hosts the fabric
// is the cluster's own and contend shapes the hosts' NICs alone, so the scenario may change its
// hosts' link rates and nothing else (no background flows, stalls, link states, nor rates of
// links between switches), and each of its hosts has one link, to its leaf. kUnsupported or
// kInvalidArgument naming the scenario, event, host or rack; read_racks' errors.
Result<void> place_on_racks(const Experiment& e, HostsOptions& o);

// Runs `cell` with ansible-playbook experiment.yml (its output in files.log + ".ansible"). On
// `stop` or failure, runs teardown.yml before returning. Errors: the oracle and stalls (their
// clock is one host's), a command job's output read from a rank other than 0, a failed playbook
// with the end of its output.
Result<void> run_cell_hosts(const Experiment& e, const Cell& cell, const CellFiles& files, const HostsOptions& o,
                            const std::atomic<bool>& stop);

}  // namespace contend::runner
