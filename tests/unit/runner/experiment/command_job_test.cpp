#include "contend/runner/experiment/command_job.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/summary.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("a command experiment has variants for its axis, one rank per node and the first variant as baseline",
          "[job]") {
  auto e = parse_job(kJobScenarios + R"("workload": {"command": ["python3", "train.py", "--rank", "{rank}"]},
    "variants": [{"name": "small", "args": ["--bucket", "1"]}, {"name": "big", "env": {"BUCKET": "25"}}])");
  REQUIRE(e.ok());
  REQUIRE(e->job);
  CHECK(e->job->ranks == 2);
  CHECK(e->workload.stages == 2);
  CHECK(e->baseline == "small");
  CHECK(e->schedules.empty());
  CHECK(e->job->workdir == std::string(CONTEND_SOURCE_DIR) + "/tests/data");
  const auto cells = expand(*e);
  REQUIRE(cells.size() == 2 * 2 * 3);
  CHECK(cells[0].id == "two-200Mbit.small.r1");
  CHECK(cells[3].variant == 1);
  CHECK(cells[3].name == "big");
  // Without variants: one, the command as it is.
  auto plain = parse_job(kJobScenarios + R"("workload": {"command": ["true"]}, "repetitions": 1)");
  REQUIRE(plain.ok());
  CHECK(expand(*plain).size() == 2);
  CHECK(plain->baseline == "job");
}

TEST_CASE("a workdir template gives each rank and cell a folder of its own, under the experiment's when relative",
          "[job]") {
  const std::string folder = std::string(CONTEND_SOURCE_DIR) + "/tests/data";
  const auto workdir_of = [](const std::string& workdir, int rank) {
    auto e =
        parse_job(kJobScenarios + R"("workload": {"command": ["python3", "{experiment_dir}/train.py"], "workdir": )" +
                  nlohmann::json(workdir).dump() + "}");
    REQUIRE(e.ok());
    return *rank_workdir(*e->job, place_of(rank));
  };
  CHECK(workdir_of("{out}/rank{rank}", 1) == "/r/runs/x.out/rank1");  // the cell's folder: fresh each cell
  CHECK(workdir_of("scratch/{node}/", 0) == folder + "/scratch/n0");
  CHECK(workdir_of("{experiment_dir}/../{{x}}-{rank}", 1) == std::string(CONTEND_SOURCE_DIR) + "/tests/{x}-1");
  CHECK(workdir_of("..", 1) == std::string(CONTEND_SOURCE_DIR) + "/tests");  // no placeholder: one folder
  auto e = parse_job(kJobScenarios + R"("workload": {"command": ["python3", "{experiment_dir}/t.py"]})");
  REQUIRE(e.ok());
  CHECK_FALSE(workdir_is_template(*e->job));
  CHECK(*rank_command(*e->job, e->job->variants.at(0), place_of(0)) ==
        std::vector<std::string>{"python3", folder + "/t.py"});
  CHECK_THAT(job_error_of(R"("workload": {"command": ["t"], "workdir": "{out}/{cell}"})"),
             Catch::Contains("/workload/workdir: \"{out}/{cell}\": unknown placeholder {cell}"));
}

TEST_CASE("bad command experiments say where and what", "[job]") {
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"]}, "schedules": ["1f1b"])"),
             Catch::Contains("/schedules") && Catch::Contains("\"variants\", not \"schedules\""));
  CHECK_THAT(job_error_of(R"("workload": {"stages": 2, "fwd": "1ms"}, "schedules": ["1f1b"], "variants": [])"),
             Catch::Contains("/variants"));
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x", "{rnak}"]})"),
             Catch::Contains("/workload/command/1") && Catch::Contains("unknown placeholder {rnak}"));
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"], "env": {"A": "{rank"}})"),
             Catch::Contains("/workload/env/A") && Catch::Contains("without its '}'"));
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"], "output_rank": 2})"),
             Catch::Contains("/workload/output_rank") && Catch::Contains("below 2"));
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"], "speed": 1})"), Catch::Contains("speed"));
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"], "launch": "all"})"), Catch::Contains("/workload/launch"));
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"]}, "variants": [{"name": "a"}, {"name": "a"}])"),
             Catch::Contains("/variants/1/name") && Catch::Contains("twice"));
  // Names that differ but would share a cell id: one would never run and report the other's cells.
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"]},
                          "variants": [{"name": "a-b"}, {"name": "c"}, {"name": "a=b"}])"),
             Catch::Contains("/variants") && Catch::Contains("\"a-b\" and \"a=b\" would both be \"a-b\""));
  CHECK(parse_job(kJobScenarios + R"("workload": {"command": ["x"]}, "variants": [{"name": "a_b"}, {"name": "a.b"}])")
            .ok());
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"]}, "variants": [{"name": "a"}], "baseline": "b")"),
             Catch::Contains("/baseline") && Catch::Contains("not one of the variants"));
  auto slowdown = parse_job(kJobScenarios + R"("workload": {"command": ["x"]}, "baseline_scenario": "two-200Mbit")");
  REQUIRE(slowdown.ok());
  CHECK(slowdown->baseline_scenario == "two-200Mbit");
  CHECK_THAT(job_error_of(R"("workload": {"command": ["x"]}, "baseline_scenario": "steady")"),
             Catch::Contains("/baseline_scenario") &&
                 Catch::Contains("\"steady\" is not one of the scenarios (two-200Mbit, two-50Mbit)"));
}

TEST_CASE("an experiment file named without a folder has the current one for its job", "[job]") {
  const std::string scenario = std::string(CONTEND_SOURCE_DIR) + "/tests/data/scenarios/two-200Mbit.json";
  for (const char* workdir : {".", "{out}/rank{rank}"}) {
    auto e = runner::parse_experiment(R"({"schema": "contend.experiment/1", "name": "j", "scenarios": [")" + scenario +
                                          R"("], "workload": {"command": ["x"], "workdir": ")" + workdir + R"("}})",
                                      "j.json");
    REQUIRE(e.ok());
    CHECK(e->job->folder == std::filesystem::current_path().lexically_normal().string());
  }
}

TEST_CASE("placeholders expand per rank and braces double to stay literal", "[job]") {
  CommandJob job;
  job.port = 29511;
  const RankPlace p = place_of(1);
  CHECK(*expand_placeholders("{rank}/{world_size} {node}@{addr} on {ifname}", p, job) == "1/2 n1@198.18.0.2 on c0-n0");
  CHECK(*expand_placeholders("{master_addr}:{master_port} {peers} {nodes}", p, job) ==
        "198.18.0.1:29511 198.18.0.1,198.18.0.2 n0,n1");
  CHECK(*expand_placeholders("{{\"a\": {local_rank}}} {out}", p, job) == "{\"a\": 0} /r/runs/x.out");
  CHECK_FALSE(expand_placeholders("a } b", p, job).ok());
  CHECK_THAT(expand_placeholders("{ rank }", p, job).error().message, Catch::Contains("known placeholders: {rank}"));
}

TEST_CASE("each rank's environment is what torchrun, gloo, NCCL and Open MPI expect, the job's on top", "[job]") {
  CommandJob job;
  job.env = {{"MASTER_PORT", "1234"}, {"NODE_TAG", "{node}-{rank}"}};
  const JobVariant variant{"v", {"--lr", "{rank}"}, {{"NODE_TAG", "variant"}}};
  job.command = {"python3", "t.py"};
  const auto env = rank_environment(job, variant, place_of(1));
  REQUIRE(env.ok());
  CHECK(value_of(*env, "RANK") == "1");
  CHECK(value_of(*env, "WORLD_SIZE") == "2");
  CHECK(value_of(*env, "LOCAL_RANK") == "0");
  CHECK(value_of(*env, "MASTER_ADDR") == "198.18.0.1");
  CHECK(value_of(*env, "MASTER_PORT") == "1234");  // the job's replaces contend's
  CHECK(value_of(*env, "GLOO_SOCKET_IFNAME") == "c0-n0");
  CHECK(value_of(*env, "NCCL_SOCKET_IFNAME") == "c0-n0");
  CHECK(value_of(*env, "OMPI_MCA_btl_tcp_if_include") == "198.18.0.0/17");
  CHECK(value_of(*env, "PYTHONUNBUFFERED") == "1");
  // Nothing around the links: Open MPI over TCP only, NCCL without P2P, shared memory or IB, each
  // rank a host of its own to NCCL.
  CHECK(value_of(*env, "OMPI_MCA_btl") == "tcp,self");
  CHECK(value_of(*env, "OMPI_MCA_pml") == "ob1");
  CHECK(value_of(*env, "NCCL_P2P_DISABLE") == "1");
  CHECK(value_of(*env, "NCCL_SHM_DISABLE") == "1");
  CHECK(value_of(*env, "NCCL_IB_DISABLE") == "1");
  CHECK(value_of(*env, "NCCL_HOSTID") == "n1");
  CHECK(value_of(*env, "NODE_TAG") == "variant");  // the variant's replaces the job's
  CHECK(std::count_if(env->begin(), env->end(), [](const std::string& e) { return e.rfind("NODE_TAG=", 0) == 0; }) ==
        1);
  // The opt-out: a job that wants NCCL's shared memory back says so in its env.
  job.env.emplace_back("NCCL_SHM_DISABLE", "0");
  CHECK(value_of(*rank_environment(job, variant, place_of(1)), "NCCL_SHM_DISABLE") == "0");
  const auto argv = rank_command(job, variant, place_of(1));
  REQUIRE(argv.ok());
  CHECK(*argv == std::vector<std::string>{"python3", "t.py", "--lr", "1"});
}

TEST_CASE("a command experiment's summary says its unit and that --compare compares throughput", "[job]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "a"}, {"s", "b"}};
  Summary ref = summarize("e", "a", "real", order, {{{"s", "a"}, {100, 101, 99}}, {{"s", "b"}, {100, 100, 100}}});
  ref.compare_throughput = true;
  ref.unit = "tokens/s";
  // What --compare reads back: the unit and what is compared.
  const auto json = summary_json(ref);
  CHECK(json["unit"] == "tokens/s");
  CHECK(json["compared"] == "throughput");
  CHECK_THAT(summary_table(ref), Catch::Contains("tokens/s"));
}
