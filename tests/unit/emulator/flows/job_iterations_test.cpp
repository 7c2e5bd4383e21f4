#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/scenario/scenario.h"
#include "flows/job_iterations.h"

using namespace contend;
using namespace contend::emulator;

namespace {

Result<Scenario> closed_loop_scenario(const std::string& flow) {
  return parse_scenario(R"({"schema": "contend.scenario/1", "name": "s", "duration": "10s", "nodes": ["a", "b"],
    "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"}],
    "timeline": [{"at": "0s", "flow": )" +
                            flow + "}]}",
                        "s.json", nullptr);
}

// Nodes a and b in this process's namespace, each at its own loopback address (the whole of
// 127/8 is local), so the engine runs both ends of a flow between them without root.
TopologyPlan loopback_plan() {
  const std::string base = "127." + std::to_string(10 + ::getpid() % 200) + "." + std::to_string(::getpid() % 250);
  TopologyPlan plan;
  plan.nodes = {{"a", ""}, {"b", ""}};
  plan.switch_ports = {InterfacePlan{"a", "", "lo", base + ".1/8", ""},
                       InterfacePlan{"b", "", "lo", base + ".2/8", ""}};
  return plan;
}

}  // namespace

TEST_CASE("a closed-loop job's iteration ends when every flow delivered its bytes", "[flows]") {
  JobIterations job(2, 100);
  CHECK(job.join("x", 1.0) == 0);
  CHECK(job.join("y", 1.5) == 1);
  CHECK(job.join("x", 9.0) == 0);  // a restart keeps its slot
  job.received(0, 100, 2.0);
  job.received(1, 60, 2.5);
  CHECK(job.current() == 0);  // y is 40 bytes short
  job.received(1, 40, 3.0);
  CHECK(job.current() == 1);
  CHECK(job.iterations() == 1);
  CHECK(job.median_iteration_s() == Approx(2.0));  // from the first join to the end
  // The next iteration's bytes in one read with more: the slot is done, the rest waits.
  job.received(0, 150, 4.0);
  job.received(1, 100, 6.0);
  CHECK(job.iterations() == 2);
  job.received(1, 100, 7.0);  // slot 0 had 50 more already: 50 short still
  CHECK(job.iterations() == 2);
  job.received(0, 50, 8.0);
  CHECK(job.iterations() == 3);
  CHECK(job.median_iteration_s() == Approx(2.0));  // 2, 3, 2
  std::atomic<bool> stop{true};
  CHECK(job.wait_end(2, stop));   // ended already
  CHECK(!job.wait_end(3, stop));  // not yet, and stopped
  // Its slots every 0.5 s from its start (1.0): the first at or after a time.
  CHECK(job.next_slot_s(1.0, 0.5) == Approx(1.0));
  CHECK(job.next_slot_s(8.2, 0.5) == Approx(8.5));
  CHECK(job.next_slot_s(8.5, 0.5) == Approx(8.5));
}

TEST_CASE("a flow's iterations are parsed, and refused where they cannot run", "[flows]") {
  auto s =
      closed_loop_scenario(R"({"name": "j", "from": "a", "to": "b", "iterate": {"bytes": "2MiB", "compute": "30ms"}})");
  REQUIRE(s.ok());
  CHECK(s->closed_loop_flow() == "j");
  const auto& f = std::get<FlowStart>(s->events[0].action).flow;
  CHECK(f.iterate_bytes == 2u << 20);
  CHECK(f.iterate_compute_s == Approx(0.03));
  CHECK(f.job == "j");
  CHECK(f.job_flows == 1);
  auto udp = closed_loop_scenario(
      R"({"from": "a", "to": "b", "protocol": "udp", "rate": "1Mbit", "iterate": {"bytes": "1MiB"}})");
  REQUIRE(!udp.ok());
  CHECK_THAT(udp.error().message, Catch::Contains("/timeline/0/flow/iterate") && Catch::Contains("UDP may lose"));
  auto no_bytes = closed_loop_scenario(R"({"from": "a", "to": "b", "iterate": {"compute": "1s"}})");
  REQUIRE(!no_bytes.ok());
  CHECK_THAT(no_bytes.error().message, Catch::Contains("\"bytes\""));
  auto slotted = closed_loop_scenario(R"({"from": "a", "to": "b", "iterate": {"bytes": "1MiB", "period": "250ms"}})");
  REQUIRE(slotted.ok());
  CHECK(std::get<FlowStart>(slotted->events[0].action).flow.iterate_period_s == Approx(0.25));
  auto no_period = closed_loop_scenario(R"({"from": "a", "to": "b", "iterate": {"bytes": "1MiB", "period": "0s"}})");
  REQUIRE(!no_period.ok());
  CHECK_THAT(no_period.error().message, Catch::Contains("/timeline/0/flow/iterate/period"));
  auto unknown = closed_loop_scenario(R"({"from": "a", "to": "b", "iterate": {"bytes": "1MiB", "gap": "1s"}})");
  REQUIRE(!unknown.ok());
  CHECK_THAT(unknown.error().message, Catch::Contains("gap"));
  // Two tenants of one name would be one job whose iterations mix both.
  auto twice = parse_scenario(R"({"schema": "contend.scenario/1", "name": "s", "duration": "10s",
    "nodes": ["a", "b", "c", "d"], "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"}], "timeline": [
    {"at": "0s", "traffic": {"name": "dp", "pattern": "pairs", "hosts": ["a", "b"], "iterate": {"bytes": "1MiB"}}},
    {"at": "0s", "traffic": {"name": "dp", "pattern": "pairs", "hosts": ["c", "d"], "iterate": {"bytes": "1MiB"}}}]})",
                              "s.json", nullptr);
  REQUIRE(!twice.ok());
  CHECK_THAT(twice.error().message, Catch::Contains("/timeline/1/traffic/name") && Catch::Contains("runs already"));
  // Hosts mode: each iteration would wait on sinks on other hosts.
  HostFlowPlan plan;
  plan.node = "a";
  plan.addresses = {{"b", "127.0.0.1"}};
  auto host = FlowEngine::for_host(*s, plan);
  REQUIRE(!host.ok());
  CHECK_THAT(host.error().message, Catch::Contains("closed-loop"));
}

TEST_CASE("a closed-loop job's flows send an iteration's bytes, then wait for each other", "[flows]") {
  auto s =
      closed_loop_scenario(R"({"name": "j", "from": "a", "to": "b", "iterate": {"bytes": "1MiB", "compute": "20ms"}})");
  REQUIRE(s.ok());
  FlowSpec there = std::get<FlowStart>(s->events[0].action).flow;
  there.name = "j:a-b";
  there.job_flows = 2;
  FlowSpec back = there;
  back.name = "j:b-a";
  std::swap(back.from, back.to);
  FlowEngine engine(loopback_plan());
  auto started = engine.start(there);
  INFO((started.ok() ? "" : started.error().message));
  REQUIRE(started.ok());
  // The job's clock started with its first flow; its first iteration cannot end without the other.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(engine.stats()[0].iterations == 0);
  REQUIRE(engine.start(back).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  engine.stop_all();
  const auto stats = engine.stats();
  REQUIRE(stats.size() == 2);
  for (const FlowStats& f : stats) {
    INFO(f.name << ": " << f.iterations << " iterations, " << f.bytes_received << " bytes, " << f.error);
    CHECK(f.error.empty());
    CHECK(f.closed_loop);
    CHECK(f.iterations == stats[0].iterations);  // one job, one count
    // Each iteration computes 20 ms: a second holds 50 at most (a few more while the flows are
    // stopped one after the other); loopback moves 1 MiB in a few ms.
    CHECK(f.iterations >= 5);
    CHECK(f.iterations <= 55);
    CHECK(f.iteration_s >= 0.02);
    // Closed loop: no flow runs more than the iteration in progress ahead of the job.
    CHECK(f.bytes_received >= f.iterations * (1u << 20));
    CHECK(f.bytes_sent <= (f.iterations + 1) * (1u << 20));
  }
}

TEST_CASE("a slotted job's iterations begin on its period, however fast its bytes go", "[flows]") {
  auto s = closed_loop_scenario(
      R"({"name": "j", "from": "a", "to": "b", "iterate": {"bytes": "256KiB", "compute": "10ms", "period": "100ms"}})");
  REQUIRE(s.ok());
  FlowEngine engine(loopback_plan());
  auto started = engine.start(std::get<FlowStart>(s->events[0].action).flow);
  INFO((started.ok() ? "" : started.error().message));
  REQUIRE(started.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  engine.stop_all();
  const auto stats = engine.stats();
  REQUIRE(stats.size() == 1);
  INFO(stats[0].iterations << " iterations, median " << stats[0].iteration_s << " s, " << stats[0].error);
  CHECK(stats[0].error.empty());
  // Unslotted it would end one every ~10 ms; on its 100 ms period, about ten in a second.
  CHECK(stats[0].iterations >= 7);
  CHECK(stats[0].iterations <= 11);
  CHECK(stats[0].iteration_s == Approx(0.1).margin(0.02));
}
