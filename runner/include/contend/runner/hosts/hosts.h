#pragma once
// Hosts mode: one cell of an experiment on cluster hosts, through the Ansible playbooks in
// ansible/ (experiment.yml shapes each host's interface per peer, runs one worker per host in the
// inventory's `nodes` order, or a command experiment's rank through `contend job-rank`
// (hosts/job_hosts.h), and collects into the same results layout as the single-host mode).
// Needs ansible-playbook on PATH (kNotFound otherwise). Not thread-safe: one cell at a time.

#include <atomic>
#include <string>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/real/launcher.h"

namespace contend::runner {

struct HostsOptions {
  std::string inventory;                // an Ansible inventory with a `nodes` group in pipeline order
  std::string ansible_dir;              // the folder with experiment.yml and teardown.yml
  std::string results;                  // the results folder (absolute)
  std::vector<std::string> extra_vars;  // more -e arguments (tests: contend_bin, contend_netns)
};

// Runs `cell` with ansible-playbook experiment.yml (its output in files.log + ".ansible"). On
// `stop` or failure, runs teardown.yml before returning. Errors: the oracle and stalls (their
// clock is one host's), a command job's output read from a rank other than 0, a failed playbook
// with the end of its output.
Result<void> run_cell_hosts(const Experiment& e, const Cell& cell, const CellFiles& files, const HostsOptions& o,
                            const std::atomic<bool>& stop);

}  // namespace contend::runner
