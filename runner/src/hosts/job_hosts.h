#pragma once
// What a command experiment's ranks run on cluster hosts (hosts.h, ansible/roles/job): each
// rank's command line and environment, expanded here once per rank with every placeholder that
// depends on the host (its address, interface, the peers' addresses, its scratch folder) left as
// an Ansible expression that the host renders for itself from the inventory, and the user's own
// text kept from Ansible's templating ({% raw %}). Rank r is the host at position r of
// contend_rank_hosts, as for contend's own workers: the inventory's `nodes` group in order, or on a
// fabric the hosts its placement picks (hosts.h). Pure; thread-safe.

#include <string>

#include <nlohmann/json.hpp>

#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::runner {

// The playbook variables of `cell` of `e` (e.job set): contend_job (true), contend_job_ranks
// (per rank: "argv", "env" as "NAME=VALUE", "workdir" and "make_workdir": the folder it starts in
// and whether the host makes it (a workdir template), "run": whether the rank's host starts the
// command), contend_job_timeout (seconds). kInvalidArgument when a template does not expand or the user's
// text holds "endraw", which would end the raw block early.
Result<nlohmann::json> job_hosts_vars(const Experiment& e, const Cell& cell);

}  // namespace contend::runner
