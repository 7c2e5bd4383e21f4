#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "contend/emulator/flow_engine.h"
#include "contend/emulator/flow_job.h"

using namespace contend;
using namespace contend::emulator;

namespace {
Scenario three_nodes() {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "s", "duration": "10s", "nodes": ["a", "b", "c"],
    "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"}, {"name": "b-c", "from": "b", "to": "c", "rate": "1Gbit"}]})";
  return *parse_scenario(text, "s.json", nullptr);
}

Result<FlowJob> job(const std::string& flows, const std::string& duration = "10s") {
  return parse_flow_job(
      R"({"schema": "contend.flow-job/1", "duration": ")" + duration + R"(", "flows": )" + flows + "}", "j.json",
      three_nodes());
}
}  // namespace

TEST_CASE("a flow job expands starts, stops and on/off patterns within its duration", "[flows]") {
  auto j = job(R"([{"name": "x", "from": "a", "to": "b", "start": "1s", "duration": "2s"},
                   {"name": "y", "from": "b", "to": "c", "protocol": "udp", "rate": "10Mbit", "on": "1s", "off": "2s"}])");
  REQUIRE(j.ok());
  std::vector<std::tuple<double, std::string, bool>> got;
  for (const Event& e : j->events) {
    got.emplace_back(e.at_s, e.flow.name, e.kind == Event::Kind::kFlowStart);
  }
  const std::vector<std::tuple<double, std::string, bool>> expected = {
      {0, "y", true},  {1, "x", true}, {1, "y", false}, {3, "x", false}, {3, "y", true},
      {4, "y", false}, {6, "y", true}, {7, "y", false}, {9, "y", true},  {10, "y", false}};
  CHECK(got == expected);
  CHECK(j->events[0].flow.protocol == Protocol::kUdp);
  CHECK(j->events[0].flow.rate_bps == 10e6);
}

TEST_CASE("a flow job plays as a scenario of the run's nodes and links with the job's flows", "[flows]") {
  auto j = job(R"([{"name": "x", "from": "a", "to": "b", "on": "1s", "off": "1s"}])", "3s");
  REQUIRE(j.ok());
  const Scenario s = job_scenario(*j, three_nodes());
  CHECK(s.source == "j.json");
  CHECK(s.duration_s == 3);
  CHECK(s.links.size() == 2);
  CHECK(s.flow_events() == 4);  // on at 0 and 2, each 1 s
  CHECK(s.events.back().at_s == 3);
}

TEST_CASE("flow job errors name the file, the JSON path and what was expected", "[flows]") {
  const auto err = [](const std::string& flows) { return job(flows).error().message; };
  CHECK_THAT(err(R"([{"from": "a", "to": "z"}])"), Catch::Contains("j.json: /flows/0/to: unknown node \"z\""));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "on": "1s"}])"), Catch::Contains("needs both \"on\" and \"off\""));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "start": "soon"}])"),
             Catch::Contains("/flows/0/start: expected a duration"));
  CHECK_THAT(err(R"([{"from": "a", "to": "b"}, {"from": "a", "to": "b"}])"), Catch::Contains("listed twice"));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "colour": 1}])"), Catch::Contains("/flows/0/colour: unknown key"));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "rate": "fast"}])"),
             Catch::Contains("expected \"unlimited\" or a positive rate"));
  CHECK_THAT(parse_flow_job("{}", "j.json", three_nodes()).error().message, Catch::Contains("/schema: missing"));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "message_size": "100GiB"}])"),
             Catch::Contains("j.json: /flows/0/message_size: expected 1B to 64MiB"));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "message_size": "0B"}])"), Catch::Contains("/flows/0/message_size"));
  CHECK_THAT(err(R"([{"from": "a", "to": "b", "on": "1ns", "off": "1s"}])"),
             Catch::Contains("j.json: /flows/0/on: expected at least 1ms"));
  CHECK_THAT(job(R"([{"from": "a", "to": "b", "on": "1ms", "off": "1ms"}])", "1h").error().message,
             Catch::Contains("j.json: /flows/0: expands to more than 250000 events"));
}

TEST_CASE("a flow never allocates its message: a TCP flow with a 1 TiB message sends from a small buffer", "[flows]") {
  // Hosts mode on loopback (no namespaces, no root): this engine sinks and sources the flow.
  const std::string text = R"({"schema": "contend.scenario/1", "name": "s", "duration": "10s", "nodes": ["a", "b"],
    "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"}],
    "timeline": [{"at": "0s", "flow": {"name": "f", "from": "b", "to": "a"}}]})";
  auto s = parse_scenario(text, "s.json", nullptr);
  REQUIRE(s.ok());
  HostFlowPlan sink_plan;
  sink_plan.node = "a";
  sink_plan.address = "127.0.0.1";
  sink_plan.base_port = 43000 + ::getpid() % 2000;
  auto sink = FlowEngine::for_host(*s, sink_plan);
  REQUIRE(sink.ok());
  HostFlowPlan source_plan = sink_plan;
  source_plan.node = "b";
  source_plan.addresses = {{"a", "127.0.0.1"}};
  auto source = FlowEngine::for_host(*s, source_plan);
  REQUIRE(source.ok());
  FlowSpec f = s->events[0].flow;
  f.message_bytes = std::uint64_t{1} << 40;  // past the parser's limit: the engine must not allocate it
  REQUIRE((*source)->start(f).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE((*source)->stop("f").ok());
  const auto stats = (*source)->stats();
  REQUIRE(stats.size() == 1);
  CHECK(stats[0].bytes_sent > 0);
  CHECK(stats[0].error.empty());
}

TEST_CASE("flows between linked nodes use the link's background addresses, others cross the switch", "[flows]") {
  const TopologyPlan plan = plan_topology(three_nodes(), "r");
  FlowSpec f;
  f.name = "f";
  f.from = "b";
  f.to = "a";
  auto e = flow_endpoints(plan, f);
  REQUIRE(e.ok());
  CHECK(e->via == "a-b");
  CHECK(e->src_address == "198.19.0.2");
  CHECK(e->dst_address == "198.19.0.1");
  CHECK(e->src_netns == "contend-r.b");
  f.to = "c";
  f.from = "a";
  e = flow_endpoints(plan, f);
  REQUIRE(e.ok());
  CHECK(e->via == "switch");
  CHECK(e->dst_address == "198.18.255.3");
  f.to = "q";
  CHECK(flow_endpoints(plan, f).error().code == Errc::kNotFound);
}
