#include "results/link_bytes.h"

#include <catch2/catch.hpp>

#include "job/job_cell.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

namespace {

// An events log: the player's start line, then `lines`.
std::string events(const std::string& lines) {
  return R"({"kind": "start", "scenario": "two", "steady_s": 1.0, "duration_s": 30})"
         "\n" +
         lines;
}

std::string sample(double t, const std::string& node, const std::string& cls, std::uint64_t bytes) {
  return R"({"kind": "sample", "t_s": )" + std::to_string(t) + R"(, "link": "a-b", "node": ")" + node +
         R"(", "class": ")" + cls + R"(", "rate_bps": 2e8, "bytes": )" + std::to_string(bytes) +
         R"(, "packets": 1, "drops": 0, "overlimits": 0})"
         "\n";
}

emulator::Scenario two_hosts(bool flow) {
  emulator::Scenario s;
  s.nodes = {"n0", "n1"};
  if (flow) {
    emulator::FlowStart start;
    start.flow.name = "bg";
    start.flow.from = "n0";
    start.flow.to = "n1";
    s.events.push_back({1.0, start, "/timeline/0"});
  }
  return s;
}

}  // namespace

TEST_CASE("a cell's bytes per shaped end are its counters' last reading less their first", "[link_bytes]") {
  TempFile log(events(sample(0.1, "n0", "link", 1000) + sample(0.1, "n0", "workload", 900) +
                      sample(0.1, "n0", "background", 100) + sample(0.2, "n0", "link", 51000) +
                      sample(0.2, "n0", "workload", 40900) + sample(0.2, "n0", "background", 10100) +
                      sample(0.2, "n1", "tbf", 7) + sample(0.3, "n1", "tbf", 2007)));
  auto ports = port_bytes(log.name);
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 2);
  CHECK((*ports)[0].node == "n0");
  CHECK((*ports)[0].bytes == 50000);
  CHECK((*ports)[0].workload == std::optional<std::uint64_t>(40000));
  CHECK((*ports)[1].node == "n1");
  CHECK((*ports)[1].bytes == 2000);
  CHECK_FALSE((*ports)[1].workload);
  const auto json = port_bytes_json(*ports);
  CHECK(json.size() == 2);
  CHECK(json[0]["workload"] == 40000);
  CHECK_FALSE(json[1].contains("workload"));
}

TEST_CASE("a fabric's ports lines are summed per port of its index", "[link_bytes]") {
  TempFile log(events(
      R"({"kind": "port_index", "t_s": 0.1, "ports": [{"link": "h0-l0", "node": "h0"}, {"link": "h0-l0", "node": "l0"}]})"
      "\n"
      R"({"kind": "ports", "t_s": 0.1, "kib": [0, 0], "drops": [0, 0]})"
      "\n"
      R"({"kind": "ports", "t_s": 0.2, "kib": [3, 1], "drops": [0, 0]})"
      "\n"
      R"({"kind": "ports", "t_s": 0.3, "kib": [5, 0], "drops": [0, 0]})"
      "\n"));
  auto ports = port_bytes(log.name);
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 2);
  CHECK((*ports)[0].bytes == 8 * 1024);
  CHECK((*ports)[1].bytes == 1024);
  emulator::Scenario s;
  s.nodes = {"h0"};
  s.switches = {"l0"};
  s.placed = 1;
  CHECK(hosts_sent(*ports, s) == std::optional<std::uint64_t>(8 * 1024));  // the switch's port is not a host's
}

TEST_CASE("a damaged events log is refused naming its line", "[link_bytes]") {
  TempFile bad_json(events(sample(0.1, "n0", "link", 1) + "{not json\n"));
  auto read = port_bytes(bad_json.name);
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(read.error().message, Catch::Contains("line 3"));
  TempFile bad_count(events(R"({"kind": "sample", "link": "a-b", "node": "n0", "class": "link", "bytes": -4})"
                            "\n"));
  read = port_bytes(bad_count.name);
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(read.error().message, Catch::Contains("line 2: a sample whose \"bytes\" is not a count"));
  TempFile short_ports(events(R"({"kind": "port_index", "ports": [{"link": "x", "node": "h0"}]})"
                              "\n"
                              R"({"kind": "ports", "kib": [1, 2]})"
                              "\n"));
  read = port_bytes(short_ports.name);
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(read.error().message, Catch::Contains("does not match its port_index"));
  CHECK(port_bytes("/nonexistent/events.jsonl").error().code == Errc::kNotFound);
}

TEST_CASE("a job's bytes are its hosts' workload share, unknown where a flow shares an unsplit end", "[link_bytes]") {
  const std::vector<PortBytes> split = {{"a-b", "n0", 5000, 3000}, {"a-b", "n1", 700, 600}};
  CHECK(hosts_sent(split, two_hosts(true)) == std::optional<std::uint64_t>(3600));
  const std::vector<PortBytes> whole = {{"a-b", "n0", 5000, std::nullopt}, {"a-b", "n1", 700, std::nullopt}};
  CHECK(hosts_sent(whole, two_hosts(false)) == std::optional<std::uint64_t>(5700));
  CHECK_FALSE(hosts_sent(whole, two_hosts(true)));
}

TEST_CASE("a job whose ranks sent almost nothing over the links is refused, naming the paths around them",
          "[link_bytes]") {
  auto e = parse_job(kJobScenarios + R"("workload": {"command": ["x"], "steps": 10, "warmup": 0})");
  REQUIRE(e.ok());
  const emulator::Scenario s = two_hosts(false);
  const std::vector<PortBytes> little = {{"a-b", "n0", 200000, 200000}, {"a-b", "n1", 1000, 1000}};
  auto refused = check_links_carried(*e->job, s, little);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("sent 196KiB over the scenario's links for at least 10 steps"));
  CHECK_THAT(refused.error().message, Catch::Contains("TensorPipe's cma"));
  const std::vector<PortBytes> enough = {{"a-b", "n0", 700000, 700000}, {"a-b", "n1", 1000, 1000}};
  CHECK(check_links_carried(*e->job, s, enough).ok());
  auto quiet =
      parse_job(kJobScenarios + R"("workload": {"command": ["x"], "steps": 10, "min_link_bytes_per_step": "0"})");
  REQUIRE(quiet.ok());
  CHECK(check_links_carried(*quiet->job, s, {}).ok());
  auto bad = job_error_of(R"("workload": {"command": ["x"], "min_link_bytes_per_step": "lots"})");
  CHECK_THAT(bad, Catch::Contains("/workload/min_link_bytes_per_step"));
}
