// A user's own job as an experiment (job.h, job_log.h, job_cell.h): templates, the environment
// its ranks get, the experiment's strict parsing, the steps read from a rank log on the scenario's
// clock, and --compare on throughput.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "contend/runner/experiment/command_job.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/job/job_cell.h"
#include "contend/runner/job/job_log.h"
#include "contend/runner/results/summary.h"
#include "hosts/job_hosts.h"

using namespace contend;
using namespace contend::runner;

namespace {

Result<Experiment> parse(const std::string& body) {
  return parse_experiment(R"({"schema": "contend.experiment/1", "name": "j", )" + body + "}",
                          std::string(CONTEND_SOURCE_DIR) + "/tests/data/j.json");
}
const std::string kScenarios = R"("scenarios": ["scenarios/two-200Mbit.json", "scenarios/two-50Mbit.json"], )";

std::string error_of(const std::string& body) {
  auto e = parse(kScenarios + body);
  REQUIRE_FALSE(e.ok());
  return e.error().message;
}

RankPlace place_of(int rank) {
  RankPlace p;
  p.rank = rank;
  p.world = 2;
  p.node = rank == 0 ? "n0" : "n1";
  p.address = rank == 0 ? "198.18.0.1" : "198.18.0.2";
  p.ifname = rank == 0 ? "c0-n1" : "c0-n0";
  p.addresses = {"198.18.0.1", "198.18.0.2"};
  p.nodes = {"n0", "n1"};
  p.out = "/r/runs/x.out";
  return p;
}

std::string value_of(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& e : env) {
    if (e.rfind(name + "=", 0) == 0) {
      return e.substr(name.size() + 1);
    }
  }
  return "(unset)";
}

// A temp file holding `text` (at `at`, or a new name), removed with the object.
struct TempFile {
  explicit TempFile(const std::string& text, const std::string& at = "")
      : path(!at.empty() ? at
                         : "/tmp/contend-job-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
  static inline int counter = 0;
};

}  // namespace

TEST_CASE("a command experiment has variants for its axis, one rank per node and the first variant as baseline",
          "[job]") {
  auto e = parse(kScenarios + R"("workload": {"command": ["python3", "train.py", "--rank", "{rank}"]},
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
  auto plain = parse(kScenarios + R"("workload": {"command": ["true"]}, "repetitions": 1)");
  REQUIRE(plain.ok());
  CHECK(expand(*plain).size() == 2);
  CHECK(plain->baseline == "job");
}

TEST_CASE("bad command experiments say where and what", "[job]") {
  CHECK_THAT(error_of(R"("workload": {"command": ["x"]}, "schedules": ["1f1b"])"),
             Catch::Contains("/schedules") && Catch::Contains("\"variants\", not \"schedules\""));
  CHECK_THAT(error_of(R"("workload": {"stages": 2, "fwd": "1ms"}, "schedules": ["1f1b"], "variants": [])"),
             Catch::Contains("/variants"));
  CHECK_THAT(error_of(R"("workload": {"command": ["x", "{rnak}"]})"),
             Catch::Contains("/workload/command/1") && Catch::Contains("unknown placeholder {rnak}"));
  CHECK_THAT(error_of(R"("workload": {"command": ["x"], "env": {"A": "{rank"}})"),
             Catch::Contains("/workload/env/A") && Catch::Contains("without its '}'"));
  CHECK_THAT(error_of(R"("workload": {"command": ["x"], "output_rank": 2})"),
             Catch::Contains("/workload/output_rank") && Catch::Contains("below 2"));
  CHECK_THAT(error_of(R"("workload": {"command": ["x"], "speed": 1})"), Catch::Contains("speed"));
  CHECK_THAT(error_of(R"("workload": {"command": ["x"], "launch": "all"})"), Catch::Contains("/workload/launch"));
  CHECK_THAT(error_of(R"("workload": {"command": ["x"]}, "variants": [{"name": "a"}, {"name": "a"}])"),
             Catch::Contains("/variants/1/name") && Catch::Contains("twice"));
  // Names that differ but would share a cell id: one would never run and report the other's cells.
  CHECK_THAT(error_of(R"("workload": {"command": ["x"]},
                          "variants": [{"name": "a-b"}, {"name": "c"}, {"name": "a=b"}])"),
             Catch::Contains("/variants") && Catch::Contains("\"a-b\" and \"a=b\" would both be \"a-b\""));
  CHECK(parse(kScenarios + R"("workload": {"command": ["x"]}, "variants": [{"name": "a_b"}, {"name": "a.b"}])").ok());
  CHECK_THAT(error_of(R"("workload": {"command": ["x"]}, "variants": [{"name": "a"}], "baseline": "b")"),
             Catch::Contains("/baseline") && Catch::Contains("not one of the variants"));
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
  CHECK(value_of(*env, "NODE_TAG") == "variant");  // the variant's replaces the job's
  CHECK(std::count_if(env->begin(), env->end(), [](const std::string& e) { return e.rfind("NODE_TAG=", 0) == 0; }) ==
        1);
  const auto argv = rank_command(job, variant, place_of(1));
  REQUIRE(argv.ok());
  CHECK(*argv == std::vector<std::string>{"python3", "t.py", "--lr", "1"});
}

TEST_CASE("on cluster hosts a rank's command keeps the user's text raw and leaves the host's parts to the host",
          "[job]") {
  auto e = parse(kScenarios + R"j("workload": {"command": ["mpirun", "--host", "{peers}", "-c", "print({{1: 2}})"],
    "launch": "rank-0", "timeout": "42s", "env": {"TAG": "{node}:{rank}"}}, "repetitions": 1)j");
  REQUIRE(e.ok());
  auto vars = job_hosts_vars(*e, expand(*e).at(0));
  REQUIRE(vars.ok());
  const auto& ranks = (*vars)["contend_job_ranks"];
  REQUIRE(ranks.size() == 2);
  CHECK(ranks[0]["run"] == true);
  CHECK(ranks[1]["run"] == false);  // mpirun on rank 0 starts the other
  const auto at = [](const std::string& expression) { return "{% endraw %}{{ " + expression + " }}{% raw %}"; };
  CHECK(ranks[0]["argv"][2] == "{% raw %}" + at("hostvars[groups['nodes'][0]].contend_address") + "," +
                                   at("hostvars[groups['nodes'][1]].contend_address") + "{% endraw %}");
  CHECK(ranks[0]["argv"][4] == "{% raw %}print({1: 2}){% endraw %}");  // Ansible must not read it
  const std::vector<std::string> env = ranks[1]["env"];
  CHECK(value_of(env, "{% raw %}TAG") == at("inventory_hostname") + ":1{% endraw %}");
  CHECK(value_of(env, "{% raw %}OMPI_MCA_btl_tcp_if_include") == at("contend_iface") + "{% endraw %}");
  CHECK((*vars)["contend_job_timeout"] == 42);
  // Text that would end the raw block early is refused, naming where it is.
  auto bad = parse(kScenarios + R"("workload": {"command": ["echo", "{{% endraw %}}"]}, "repetitions": 1)");
  REQUIRE(bad.ok());
  auto refused = job_hosts_vars(*bad, expand(*bad).at(0));
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("/workload/command") && Catch::Contains("endraw"));
}

TEST_CASE("a node's hosts file names this machine and every node at its link address", "[job]") {
  const std::string hosts = job_hosts_file("vm", "n1", {"n0", "n1"}, {"198.18.0.1", "198.18.0.2"});
  CHECK_THAT(hosts, Catch::Contains("127.0.0.1\tlocalhost\n"));
  CHECK_THAT(hosts, Catch::Contains("198.18.0.1\tn0\n"));
  CHECK_THAT(hosts, Catch::Contains("198.18.0.2\tn1 vm\n"));
  CHECK_THAT(job_hosts_file("vm", "n0", {"n0", "n1"}, {"198.18.0.1", "198.18.0.2"}),
             Catch::Contains("198.18.0.1\tn0 vm\n"));
}

TEST_CASE("ranks whose nodes share no link are named before a run", "[job]") {
  auto e = parse(R"("scenarios": ["../../emulator/scenarios/steady.json"], "workload": {"command": ["x"]})");
  REQUIRE(e.ok());
  const auto pairs = unlinked_rank_pairs(e->scenarios[0]);  // a 4-node chain
  CHECK(pairs.size() == 3);
  CHECK(pairs.front() == "n0 and n2");
  auto mesh =
      parse(R"("scenarios": ["../../emulator/scenarios/mesh/mesh4-steady.json"], "workload": {"command": ["x"]})");
  REQUIRE(mesh.ok());
  CHECK(unlinked_rank_pairs(mesh->scenarios[0]).empty());
}

TEST_CASE("a rank log's step lines are steps on the steady clock, other lines are skipped", "[job]") {
  const TempFile log(log_line(100.5, false, R"({"schema": "contend.step/1", "samples": 32, "seconds": 0.5})") +
                     log_line(100.6, true, "warning: something") + "garbage without a time\n" +
                     log_line(101.5, false, R"({"schema": "contend.step/1", "samples": 32, "seconds": 1.0})") +
                     log_line(102.0, false, R"({"schema": "contend.step/1", "throughput": 40})"));
  const auto steps = job_steps(log.path, OutputSpec{});
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 3);
  CHECK((*steps)[0].start_s == Approx(100.0));
  CHECK((*steps)[1].start_s == Approx(100.5));
  CHECK((*steps)[1].amount == 32);
  // A rate-only step covers the time since the previous step's line: 0.5 s at 40/s.
  CHECK((*steps)[2].start_s == Approx(101.5));
  CHECK((*steps)[2].amount == Approx(20));
  CHECK(rank_log_path("/r/runs/s.v.r1.log", 3) == "/r/runs/s.v.r1.rank3.log");
}

TEST_CASE("a guard's failure line says when and how its command failed, read back from the log", "[job]") {
  CHECK_THAT(
      failure_line({139, 12.5, 1764806400.25}),
      Catch::Contains("the command was killed by signal 11 (code 139, at 1764806400.250000 on the system clock)"));
  // What the command's processes print after it failed follows the line; the last one counts, and
  // a malformed one or one on stdout (the job's own) is not one.
  const TempFile log(
      log_line(10, false, "step 1") + failure_line({7, 11.25, 1764806401.5}) +
      log_line(11.3, true, "a child's last word") +
      log_line(11.4, true, "contend job-rank: the command exited with 9 (code nine, at 1 on the system clock)") +
      log_line(11.4, true, "contend job-rank: the command exited with 9 (code 9, at x on the system clock)") +
      log_line(11.4, true, "contend job-rank: the command exited with 9 (code 9.5, at 1 on the system clock)") +
      log_line(11.4, true, "contend job-rank: the command exited with 9 (code 0x9, at 1 on the system clock)") +
      log_line(11.4, true, "contend job-rank: the command exited with 9 (code  9, at -1 on the system clock)") +
      log_line(11.4, true, "contend job-rank: the command exited with 9 (code 9)") +
      log_line(11.5, false, "contend job-rank: the command exited with 3 (code 3, at 1 on the system clock)"));
  const auto failure = command_failure(log.path);
  REQUIRE(failure);
  CHECK(failure->steady_s == Approx(11.25));
  CHECK(failure->system_s == Approx(1764806401.5));
  CHECK(failure->code == 7);
  const TempFile fine(log_line(10, false, "step 1") + log_line(10.5, true, "the command exited with 3 (code 3)"));
  CHECK_FALSE(command_failure(fine.path));
  CHECK_FALSE(command_failure(fine.path + ".missing"));
}

TEST_CASE("the rank that failed first is the one whose failure line is earliest by the system clock", "[job]") {
  // Ranks on three hosts: their steady clocks have nothing in common, their system clocks agree.
  // Rank 1 failed first; rank 2's peer failed 0.3 s later, rank 0 still ran (no line).
  const std::string cell = "/tmp/contend-job-test-" + std::to_string(::getpid()) + "-first.log";
  const TempFile rank0(log_line(5, false, "step 1"), rank_log_path(cell, 0));
  const TempFile rank1(log_line(900, false, "step 1") + failure_line({3, 901, 1764806400.0}), rank_log_path(cell, 1));
  const TempFile rank2(failure_line({1, 20, 1764806400.3}), rank_log_path(cell, 2));
  const auto first = first_failure(cell, 3);
  REQUIRE(first);
  CHECK(first->rank == 1);
  CHECK(first->failure.code == 3);
  CHECK_FALSE(first_failure(cell, 1));  // rank 0 alone: none failed
  CHECK_FALSE(first_failure(cell + ".none", 3));
}

TEST_CASE("a job's throughput leaves out its warm-up and fails clearly on a log with no step", "[job]") {
  std::string text;
  double t = 10;
  for (int i = 0; i < 5; ++i) {
    const double seconds = i == 0 ? 3.0 : 0.5;  // the first step is slow (start-up)
    t += seconds;
    text += log_line(t, false,
                     R"({"schema": "contend.step/1", "samples": 10, "seconds": )" + std::to_string(seconds) + "}");
  }
  const TempFile events(R"({"schema": "contend.events/1", "kind": "start", "steady_s": 10.0, "duration_s": 60})"
                        "\n");
  const std::string cell_log = events.path + ".cell.log";  // its rank 0 log beside it
  CommandJob job;
  job.warmup = 1;
  std::ofstream(rank_log_path(cell_log, 0)) << text;
  auto throughput = job_throughput(job, cell_log, std::nullopt, events.path);
  REQUIRE(throughput.ok());
  CHECK(*throughput == Approx(20.0));  // 4 steps of 10 in 2 s
  std::ofstream(rank_log_path(cell_log, 0)) << log_line(11, false, "loss 2.5");
  auto failed = job_throughput(job, cell_log, std::nullopt, events.path);
  std::remove(rank_log_path(cell_log, 0).c_str());
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message, Catch::Contains("rank 0") && Catch::Contains("\"jsonl\" parser matched no line"));
}

TEST_CASE("a command experiment's --compare flags a throughput fall beyond tolerance and noise, not ratios", "[job]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "a"}, {"s", "b"}};
  auto summary = [&](double a, double b) {
    Summary s = summarize("e", "a", "real", order, {{{"s", "a"}, {a, a * 1.001, a * 0.999}}, {{"s", "b"}, {b, b, b}}});
    s.compare_throughput = true;
    s.unit = "tokens/s";
    return s;
  };
  const Summary ref = summary(100, 100);
  CHECK(compare(summary(100.5, 99.5), ref, 0.02).empty());  // noise
  const auto fell = compare(summary(97, 97), ref, 0.02);    // both 3% slower: equal speedups, lower throughput
  REQUIRE(fell.size() == 2);
  CHECK_THAT(fell[0].what, Catch::Contains("throughput lower by 3.0%"));
  // A fall inside the runs' intervals is noise, however large.
  Summary noisy = summarize("e", "a", "real", order, {{{"s", "a"}, {80, 100, 120}}, {{"s", "b"}, {100, 100, 100}}});
  noisy.compare_throughput = true;
  CHECK(compare(summarize("e", "a", "real", order, {{{"s", "a"}, {95, 96, 97}}, {{"s", "b"}, {100, 100, 100}}}), noisy,
                0.02)
            .empty());
  // What --compare reads back: the unit and what is compared.
  const auto json = summary_json(ref);
  CHECK(json["unit"] == "tokens/s");
  CHECK(json["compared"] == "throughput");
  CHECK_THAT(summary_table(ref), Catch::Contains("tokens/s"));
}
