#include "hosts/job_hosts.h"

#include "contend/runner/experiment/command_job.h"

namespace contend::runner {
namespace {

// An Ansible expression inside a raw block: the host renders it.
std::string rendered(const std::string& expression) {
  return "{% endraw %}{{ " + expression + " }}{% raw %}";
}

std::string host_of_rank(int rank) {
  return "contend_rank_hosts[" + std::to_string(rank) + "]";
}

// Rank `rank`'s place, its host-dependent parts left to the host.
RankPlace host_place(int rank, int world, const std::string& cell) {
  RankPlace p;
  p.rank = rank;
  p.world = world;
  p.node = rendered("inventory_hostname");
  p.address = rendered("contend_address");
  p.ifname = rendered("contend_iface");
  for (int r = 0; r < world; ++r) {
    p.addresses.push_back(rendered("hostvars[" + host_of_rank(r) + "].contend_address"));
    p.nodes.push_back(rendered(host_of_rank(r)));
  }
  p.out = rendered("contend_work_dir") + "/" + cell + ".out";
  p.mpi_networks = p.ifname;  // on a cluster the hosts' addresses are not one known subnet
  return p;
}

// The user's text, which goes into raw blocks, must not end one: kInvalidArgument naming where.
Result<void> no_raw_end(const CommandJob& job, const JobVariant& variant) {
  std::vector<std::pair<std::string, const std::string*>> texts = {{"/workload/workdir", &job.workdir}};
  for (const auto* args : {&job.command, &variant.args}) {
    for (const std::string& a : *args) {
      texts.emplace_back("/workload/command", &a);
    }
  }
  for (const auto* env : {&job.env, &variant.env}) {
    for (const auto& [name, value] : *env) {
      texts.emplace_back("/workload/env/" + name, &name);
      texts.emplace_back("/workload/env/" + name, &value);
    }
  }
  for (const auto& [where, text] : texts) {
    if (text->find("endraw") != std::string::npos) {
      return make_error(Errc::kInvalidArgument, where + ": \"" + text->substr(0, 80) +
                                                    "\" holds \"endraw\", which Ansible would take for the end of "
                                                    "the text it must not template; cluster hosts cannot run it");
    }
  }
  return {};
}

// Each of `expanded` (the user's text with rendered expressions) in a raw block.
nlohmann::json raw(const std::vector<std::string>& expanded) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& s : expanded) {
    out.push_back("{% raw %}" + s + "{% endraw %}");
  }
  return out;
}

}  // namespace

Result<nlohmann::json> job_hosts_vars(const Experiment& e, const Cell& cell) {
  const CommandJob& job = *e.job;
  const JobVariant& variant = job.variants.at(cell.variant);
  const int world = static_cast<int>(e.scenarios.at(cell.scenario).rank_hosts());
  if (auto ok = no_raw_end(job, variant); !ok) {
    return ok.error();
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < world; ++r) {
    const RankPlace place = host_place(r, world, cell.id);
    const std::string where = "rank " + std::to_string(r);
    auto command = rank_command(job, variant, place);
    if (!command) {
      return with_context(command.error(), where + ": /workload/command");
    }
    auto env = rank_environment(job, variant, place);
    if (!env) {
      return with_context(env.error(), where + ": /workload/env");
    }
    auto workdir = rank_workdir(job, place);
    if (!workdir) {
      return with_context(workdir.error(), where + ": /workload/workdir");
    }
    ranks.push_back({{"argv", raw(*command)},
                     {"env", raw(*env)},
                     {"workdir", raw({*workdir}).at(0)},
                     {"make_workdir", workdir_is_template(job)},
                     {"run", !job.launch_rank0_only || r == 0}});
  }
  return nlohmann::json{
      {"contend_job", true}, {"contend_job_ranks", ranks}, {"contend_job_timeout", job.timeout.count()}};
}

}  // namespace contend::runner
