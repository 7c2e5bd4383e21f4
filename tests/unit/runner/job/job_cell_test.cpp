#include "job/job_cell.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "contend/runner/experiment/experiment.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("a node's hosts file names this machine and every node at its link address", "[job]") {
  const std::string hosts = job_hosts_file("vm", "n1", {"n0", "n1"}, {"198.18.0.1", "198.18.0.2"});
  CHECK_THAT(hosts, Catch::Contains("127.0.0.1\tlocalhost\n"));
  CHECK_THAT(hosts, Catch::Contains("198.18.0.1\tn0\n"));
  CHECK_THAT(hosts, Catch::Contains("198.18.0.2\tn1 vm\n"));
  CHECK_THAT(job_hosts_file("vm", "n0", {"n0", "n1"}, {"198.18.0.1", "198.18.0.2"}),
             Catch::Contains("198.18.0.1\tn0 vm\n"));
}

TEST_CASE("ranks whose nodes share no link are named before a run", "[job]") {
  auto e = parse_job(R"("scenarios": ["../../emulator/scenarios/steady.json"], "workload": {"command": ["x"]})");
  REQUIRE(e.ok());
  const auto pairs = unlinked_rank_pairs(e->scenarios[0]);  // a 4-node chain
  CHECK(pairs.size() == 3);
  CHECK(pairs.front() == "n0 and n2");
  auto mesh =
      parse_job(R"("scenarios": ["../../emulator/scenarios/mesh/mesh4-steady.json"], "workload": {"command": ["x"]})");
  REQUIRE(mesh.ok());
  CHECK(unlinked_rank_pairs(mesh->scenarios[0]).empty());
}
