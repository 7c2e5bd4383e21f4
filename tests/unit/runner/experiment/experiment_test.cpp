#include "contend/runner/experiment/experiment.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "contend/runner/simulated/simulate.h"
#include "contend/runner/truth/network.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("an experiment parses with defaults and expands scenario, schedule, repetition", "[runner]") {
  auto e = parse(kGood);
  REQUIRE(e.ok());
  CHECK(e->scenarios.size() == 2);
  CHECK(e->workload.microbatches == 8);
  CHECK(e->workload.emulated.forward == std::chrono::milliseconds(5));
  CHECK(e->workload.emulated.backward == std::chrono::milliseconds(20));  // default
  CHECK(e->workload.emulated.activation_bytes == 256u * 1024);
  CHECK(e->baseline == "1f1b");
  const auto cells = expand(*e);
  REQUIRE(cells.size() == 2 * 3 * 2);
  CHECK(cells[0].id == "steady.1f1b.r1");
  CHECK(cells[1].id == "steady.kfkb-k-2.r1");  // repetition by repetition: the schedules alternate
  CHECK(cells[4].id == "steady.kfkb-k-2.r2");
  CHECK(cells.back().id == "periodic.adaptive.r2");
  CHECK(e->workload.samples_per_iteration() == 8 * 4);
}

TEST_CASE("bad experiment files say where and what", "[runner]") {
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {}, "schedules": ["1f1b"],
    "colour": "red")"),
             Catch::Contains("colour"));
  CHECK_THAT(error_of(R"("scenarios": ["nope.json"], "workload": {}, "schedules": ["1f1b"])"),
             Catch::Contains("/scenarios/0") && Catch::Contains("nope.json"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"stages": 3},
    "schedules": ["1f1b"])"),
             Catch::Contains("4 nodes") && Catch::Contains("3 stages"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"fwd": "soon"},
    "schedules": ["1f1b"])"),
             Catch::Contains("/workload/fwd"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["kfkb:k=2", "zigzag"])"),
             Catch::Contains("/schedules/1"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"],
    "workload": {"backend": "cpu", "layers": 4}, "schedules": ["1f1b", "interleaved:v=2"])"),
             Catch::Contains("/schedules/1") && Catch::Contains("cannot fill 8 stages"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["kfkb:k=2"])"),
             Catch::Contains("/baseline") && Catch::Contains("not one of the schedules"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"transport": "gloo"},
    "schedules": ["1f1b"])"),
             Catch::Contains("/workload/transport") && Catch::Contains("known: tcp"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"backend": "tpu"},
    "schedules": ["1f1b"])"),
             Catch::Contains("/workload/backend") && Catch::Contains("known: cpu, emulated"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["kfkb:2", "kfkb:k=2"])"),
             Catch::Contains("/schedules/1") && Catch::Contains("appears twice"));
  // On a fabric, no more ranks than its placement has hosts (here "pack": the 8 no flow uses).
  CHECK_THAT(
      error_of(R"("scenarios": ["../emulator/scenarios/fabric/pipeline-pack-busy.json"],
    "workload": {"stages": 9}, "schedules": ["1f1b"])"),
      Catch::Contains("/scenarios/0") && Catch::Contains("places ranks on 8 hosts") && Catch::Contains("9 stages"));
  // Nor a stall on a fabric's link that only some paths between two ranks cross (ECMP decides),
  // nor a stall under a user's job (contend's transport waits stalls; the job sends its own).
  const std::string stalled = "/tmp/contend-experiment-stall-" + std::to_string(::getpid()) + ".json";
  std::ofstream(stalled) << R"({"schema": "contend.scenario/1", "name": "stalled", "duration": "10s",
    "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 1, "spines": 2, "host_rate": "1Gbit"}},
    "timeline": [{"at": "1s", "link": "leaf0-spine1", "stall": "10ms"}]})";
  CHECK_THAT(error_of(R"("scenarios": [")" + stalled + R"("], "workload": {"stages": 2}, "schedules": ["1f1b"])"),
             Catch::Contains("/scenarios/0") && Catch::Contains("link \"leaf0-spine1\" is stalled") &&
                 Catch::Contains("only some of the paths between ranks 0 and 1 (h0, h1)"));
  std::remove(stalled.c_str());
  auto job = parse_job(
      R"("scenarios": ["../../emulator/scenarios/pipemorph/pm-first-10ms.json"], "workload": {"command": ["true"]})");
  REQUIRE_FALSE(job.ok());
  CHECK_THAT(job.error().message, Catch::Contains("/scenarios/0") && Catch::Contains("stalls links") &&
                                      Catch::Contains("a user's job sends its own"));
  // Nor a link taken down: neither the simulator nor the truth models one.
  const std::string down = "/tmp/contend-experiment-down-" + std::to_string(::getpid()) + ".json";
  std::ofstream(down) << R"({"schema": "contend.scenario/1", "name": "down", "duration": "10s", "nodes": ["a", "b"],
    "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"}],
    "timeline": [{"at": "1s", "link": "a-b", "state": "down"}]})";
  CHECK_THAT(error_of(R"("scenarios": [")" + down + R"("], "workload": {}, "schedules": ["1f1b"])"),
             Catch::Contains("/scenarios/0") && Catch::Contains("takes a link of its chain down or up"));
  std::remove(down.c_str());
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["adaptive:wobble=1"])"),
             Catch::Contains("wobble"));
  // Nor the oracle beside a closed-loop job: no timeline says when the job's bytes flow.
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/fabric/tenants-spread-dp.json"],
    "workload": {"stages": 4}, "schedules": ["1f1b", "oracle"])"),
             Catch::Contains("/schedules") && Catch::Contains("\"oracle\" reads the network") &&
                 Catch::Contains("closed-loop job (flow dp:"));
}

TEST_CASE("the simulator refuses a closed-loop job on a chain, naming its flow", "[runner]") {
  const std::string chain = "/tmp/contend-experiment-job-" + std::to_string(::getpid()) + ".json";
  std::ofstream(chain) << R"({"schema": "contend.scenario/1", "name": "chainjob", "duration": "10s",
    "nodes": ["a", "b"], "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Mbit"}],
    "timeline": [{"at": "0s", "flow": {"from": "a", "to": "b", "iterate": {"bytes": "1MiB", "compute": "100ms"}}}]})";
  auto e = parse_experiment(R"({"schema": "contend.experiment/1", "name": "x", "scenarios": [")" + chain +
                                R"("], "workload": {"stages": 2}, "schedules": ["1f1b"]})",
                            std::string(CONTEND_SOURCE_DIR) + "/experiments/t.json");
  std::remove(chain.c_str());
  REQUIRE(e.ok());
  auto net = scenario_network(e->scenarios[0]);
  REQUIRE(net.ok());
  CHECK(net->closed_loop == "a-b");
  auto sim = simulate_cell(e->workload, e->schedules[0].schedule, *net);
  REQUIRE_FALSE(sim.ok());
  CHECK(sim.error().code == Errc::kUnsupported);
  CHECK_THAT(sim.error().message, Catch::Contains("closed-loop") && Catch::Contains("run the experiment real"));
}

TEST_CASE("on a fabric the simulator replays a closed-loop job: it costs the pipeline less than its flows open loop",
          "[runner]") {
  const std::string dir = std::string(CONTEND_SOURCE_DIR) + "/emulator/scenarios/fabric/";
  auto job = emulator::load_scenario(dir + "tenants-spread-dp.json");
  auto idle = emulator::load_scenario(dir + "tenants-spread-idle.json");
  REQUIRE(job.ok());
  REQUIRE(idle.ok());
  emulator::Scenario open = *job;  // the same flows as streams, all the time
  for (emulator::Event& ev : open.events) {
    if (auto* start = std::get_if<emulator::FlowStart>(&ev.action)) {
      start->flow.iterate_bytes = 0;
    }
  }
  auto e = parse_experiment(R"({"schema": "contend.experiment/1", "name": "x",
    "scenarios": ["../emulator/scenarios/fabric/tenants-spread-dp.json"], "workload": {"stages": 4},
    "schedules": ["1f1b"]})",
                            std::string(CONTEND_SOURCE_DIR) + "/experiments/t.json");
  REQUIRE(e.ok());
  const auto throughput = [&](const emulator::Scenario& s) {
    auto net = scenario_network(s);
    REQUIRE(net.ok());
    CHECK(net->closed_loop.empty());
    auto sim = simulate_cell(e->workload, e->schedules[0].schedule, *net);
    REQUIRE(sim.ok());
    double seconds = 0;
    for (const SimIteration& it : sim->iterations) {
      seconds += it.iteration_s;
    }
    return static_cast<double>(sim->iterations.size()) / seconds;
  };
  const double alone = throughput(*idle);
  const double closed = throughput(*job);
  const double streams = throughput(open);
  CHECK(closed < alone * 0.98);
  CHECK(closed > streams * 1.02);
}

TEST_CASE("a fabric's link taken down in an experiment: its ways go around it, or wait while none does", "[runner]") {
  // Rank 0 on h0 (leaf 0), rank 1 on h2 (leaf 1); h0's only NIC down from 1 s to 3 s.
  const std::string path = "/tmp/contend-experiment-fabric-down-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"({"schema": "contend.scenario/1", "name": "down", "duration": "60s",
    "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 2, "host_rate": "200Mbit"}},
    "placement": "spread",
    "timeline": [{"at": "1s", "link": "h0-leaf0", "state": "down"}, {"at": "3s", "link": "h0-leaf0", "state": "up"},
                 {"at": "4s", "link": "leaf0-spine0", "state": "down"}, {"at": "4s", "link": "leaf1-spine0", "state": "down"}]})";
  auto e = parse_experiment(R"({"schema": "contend.experiment/1", "name": "x", "scenarios": [")" + path + R"("],
    "workload": {"stages": 2, "microbatches": 8, "iterations": 20, "warmup": 0, "backend": "emulated",
                 "fwd": "5ms", "bwd": "10ms", "activation": "1MiB"}, "schedules": ["1f1b"]})",
                            std::string(CONTEND_SOURCE_DIR) + "/experiments/t.json");
  std::remove(path.c_str());
  REQUIRE(e.ok());
  auto net = scenario_network(e->scenarios[0]);
  REQUIRE(net.ok());
  const RateTrace& way = net->links.at({0, 1});
  CHECK(way.rate_at(0.5) == Approx(0.956 * 200e6));
  CHECK(way.rate_at(2) == 0);                      // no path while h0's NIC is down
  CHECK(way.rate_at(5) == Approx(0.956 * 200e6));  // around spine 0, over spine 1
  auto sim = simulate_cell(e->workload, e->schedules[0].schedule, *net);
  REQUIRE(sim.ok());
  bool waited = false;  // an iteration across the outage took it whole
  for (const SimIteration& it : sim->iterations) {
    waited = waited || (it.start_s < 1.5 && it.start_s + it.iteration_s > 3);
  }
  CHECK(waited);
}

TEST_CASE("a measure window parses within every scenario and is checked", "[runner]") {
  auto e = parse(kGood + R"(, "measure": {"from": "1s", "to": "3s"})");
  REQUIRE(e.ok());
  REQUIRE(e->measure.has_value());
  CHECK(e->measure->from_s == 1);
  CHECK(e->measure->to_s == 3);
  CHECK_FALSE(parse(kGood)->measure.has_value());
  CHECK_THAT(error_of(kGood + R"(, "measure": {"from": "3s", "to": "1s"})"),
             Catch::Contains("/measure/to") && Catch::Contains("after"));
  CHECK_THAT(error_of(kGood + R"(, "measure": {"from": "1s", "to": "1h"})"),
             Catch::Contains("/measure/to") && Catch::Contains("lasts"));
  CHECK_THAT(error_of(kGood + R"(, "measure": {"from": "1s", "until": "2s"})"), Catch::Contains("until"));
}

TEST_CASE("on a fabric the ranks run on hosts of their own: a host another tenant's flow uses is refused", "[runner]") {
  const std::string path = "/tmp/contend-experiment-fabric-own-" + std::to_string(::getpid()) + ".json";
  const auto with_placement = [&](const std::string& placement) {
    std::ofstream(path) << R"({"schema": "contend.scenario/1", "name": "own", "duration": "60s",
      "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "200Mbit"}},)" +
                               placement + R"(
      "timeline": [{"at": "0s", "traffic": {"name": "dp", "pattern": "pairs", "hosts": ["h1", "h3"]}}]})";
    auto e = parse_experiment(R"({"schema": "contend.experiment/1", "name": "x", "scenarios": [")" + path + R"("],
      "workload": {"stages": 2, "microbatches": 8, "iterations": 2, "warmup": 0, "backend": "emulated",
                   "fwd": "5ms", "bwd": "10ms", "activation": "1MiB"}, "schedules": ["1f1b"]})",
                              std::string(CONTEND_SOURCE_DIR) + "/experiments/t.json");
    std::remove(path.c_str());
    return e;
  };
  auto listed = with_placement(R"("placement": ["h0", "h3"],)");
  REQUIRE_FALSE(listed.ok());
  CHECK_THAT(
      listed.error().message,
      Catch::Contains("runs rank 1 on h3, where flow \"dp:h1-h3\" (/timeline/0) also runs: a host runs one job"));
  // Without a placement the ranks take the first hosts in file order: h0, h1.
  auto unplaced = with_placement("");
  REQUIRE_FALSE(unplaced.ok());
  CHECK_THAT(unplaced.error().message, Catch::Contains("runs rank 1 on h1"));
  auto ruled = with_placement(R"("placement": "pack",)");
  REQUIRE(ruled.ok());
  CHECK(std::vector<std::string>(ruled->scenarios[0].nodes.begin(), ruled->scenarios[0].nodes.begin() + 2) ==
        std::vector<std::string>{"h0", "h2"});
}
