#include "hosts/job_hosts.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "contend/runner/experiment/experiment.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("on cluster hosts a rank's command keeps the user's text raw and leaves the host's parts to the host",
          "[job]") {
  auto e =
      parse_job(kJobScenarios + R"j("workload": {"command": ["mpirun", "--host", "{peers}", "-c", "print({{1: 2}})"],
    "launch": "rank-0", "timeout": "42s", "env": {"TAG": "{node}:{rank}"}}, "repetitions": 1)j");
  REQUIRE(e.ok());
  auto vars = job_hosts_vars(*e, expand(*e).at(0));
  REQUIRE(vars.ok());
  const auto& ranks = (*vars)["contend_job_ranks"];
  REQUIRE(ranks.size() == 2);
  CHECK(ranks[0]["run"] == true);
  CHECK(ranks[1]["run"] == false);  // mpirun on rank 0 starts the other
  const auto at = [](const std::string& expression) { return "{% endraw %}{{ " + expression + " }}{% raw %}"; };
  CHECK(ranks[0]["argv"][2] == "{% raw %}" + at("hostvars[contend_rank_hosts[0]].contend_address") + "," +
                                   at("hostvars[contend_rank_hosts[1]].contend_address") + "{% endraw %}");
  CHECK(ranks[0]["argv"][4] == "{% raw %}print({1: 2}){% endraw %}");  // Ansible must not read it
  const std::vector<std::string> env = ranks[1]["env"];
  CHECK(value_of(env, "{% raw %}TAG") == at("inventory_hostname") + ":1{% endraw %}");
  CHECK(value_of(env, "{% raw %}OMPI_MCA_btl_tcp_if_include") == at("contend_iface") + "{% endraw %}");
  CHECK((*vars)["contend_job_timeout"] == 42);
  CHECK(ranks[1]["make_workdir"] == false);  // the experiment's folder, as it is
  // A workdir template: each rank's own folder under its host's {out}, which the host makes.
  auto fresh = parse_job(kJobScenarios +
                         R"("workload": {"command": ["train"], "workdir": "{out}/rank{rank}"}, "repetitions": 1)");
  REQUIRE(fresh.ok());
  auto fresh_vars = job_hosts_vars(*fresh, expand(*fresh).at(0));
  REQUIRE(fresh_vars.ok());
  const auto& fresh_rank = (*fresh_vars)["contend_job_ranks"][1];
  CHECK(fresh_rank["make_workdir"] == true);
  CHECK(fresh_rank["workdir"] ==
        "{% raw %}" + at("contend_work_dir") + "/" + expand(*fresh).at(0).id + ".out/rank1{% endraw %}");
  // Text that would end the raw block early is refused, naming where it is.
  auto bad = parse_job(kJobScenarios + R"("workload": {"command": ["echo", "{{% endraw %}}"]}, "repetitions": 1)");
  REQUIRE(bad.ok());
  auto refused = job_hosts_vars(*bad, expand(*bad).at(0));
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("/workload/command") && Catch::Contains("endraw"));
}
