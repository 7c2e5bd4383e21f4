#include "results/link_bytes.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "contend/common/json_reader.h"
#include "job/job_cell.h"
#include "results/results_dir.h"
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
  // The workload's counter read just after the whole's may have run past it: never more than all.
  TempFile skewed(events(sample(0.1, "n0", "link", 1000) + sample(0.1, "n0", "workload", 1000) +
                         sample(0.2, "n0", "link", 5000) + sample(0.2, "n0", "workload", 5100)));
  CHECK(port_bytes(skewed.name)->at(0).workload == std::optional<std::uint64_t>(4000));
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
  CHECK_THAT(refused.error().message,
             Catch::Contains("TensorPipe's cma, where a rank log says its guard left it open"));
  const std::vector<PortBytes> enough = {{"a-b", "n0", 700000, 700000}, {"a-b", "n1", 1000, 1000}};
  CHECK(check_links_carried(*e->job, s, enough).ok());
  auto quiet =
      parse_job(kJobScenarios + R"("workload": {"command": ["x"], "steps": 10, "min_link_bytes_per_step": "0"})");
  REQUIRE(quiet.ok());
  CHECK(check_links_carried(*quiet->job, s, {}).ok());
  auto bad = job_error_of(R"("workload": {"command": ["x"], "min_link_bytes_per_step": "lots"})");
  CHECK_THAT(bad, Catch::Contains("/workload/min_link_bytes_per_step"));
}

TEST_CASE("what each end sent is read back from cells.jsonl as written, and a damaged entry is refused",
          "[link_bytes]") {
  const std::vector<PortBytes> sent = {{"a-b", "n0", 4096, 4000}, {"a-b", "n1", 512, std::nullopt}};
  const nlohmann::json written = port_bytes_json(sent);
  auto back = read_port_bytes(JsonReader(written, "cells.jsonl:1", "/link_bytes"));
  REQUIRE(back.ok());
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].link == "a-b");
  CHECK((*back)[0].node == "n0");
  CHECK((*back)[0].bytes == 4096);
  CHECK((*back)[0].workload == std::optional<std::uint64_t>(4000));
  CHECK_FALSE((*back)[1].workload.has_value());
  for (const char* bad : {R"({"link": "a-b", "node": "n0", "bytes": 10, "workload": -1})",
                          R"({"link": "a-b", "node": "n0", "bytes": -1})", R"({"link": "a-b", "bytes": 10})",
                          R"({"link": "a-b", "node": "n0", "bytes": 10, "drops": 1})"}) {
    const nlohmann::json entries = nlohmann::json::array({nlohmann::json::parse(bad)});
    auto refused = read_port_bytes(JsonReader(entries, "cells.jsonl:1", "/link_bytes"));
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("cells.jsonl:1") && Catch::Contains("/link_bytes/0"));
  }
  // A share read a little past the whole (two counters read one after the other) is all of it.
  const nlohmann::json past = nlohmann::json::parse(R"([{"link": "a-b", "node": "n0", "bytes": 10, "workload": 11}])");
  CHECK(read_port_bytes(JsonReader(past, "cells.jsonl:1", "/link_bytes"))->at(0).workload ==
        std::optional<std::uint64_t>(10));
  const nlohmann::json not_array = nlohmann::json::object();
  CHECK_FALSE(read_port_bytes(JsonReader(not_array, "cells.jsonl:1", "/link_bytes")).ok());
}

TEST_CASE("a cell's repetitions give each end its median, an end one of them lacks having sent nothing there",
          "[link_bytes]") {
  const std::vector<std::vector<PortBytes>> reps = {
      {{"a-b", "n0", 100, 90}, {"a-b", "n1", 7, 7}},
      {{"a-b", "n0", 300, 280}},  // n1 sent nothing: not listed
      {{"a-b", "n0", 200, 190}, {"a-b", "n1", 9, 9}, {"b-c", "n1", 50, std::nullopt}},
  };
  const std::vector<PortBytes> m = median_port_bytes(reps);
  REQUIRE(m.size() == 3);
  CHECK(m[0].node == "n0");
  CHECK(m[0].bytes == 200);
  CHECK(m[0].workload == std::optional<std::uint64_t>(190));
  CHECK(m[1].bytes == 7);  // 7, 0 and 9
  CHECK(m[1].workload == std::optional<std::uint64_t>(7));
  CHECK(m[2].link == "b-c");
  CHECK(m[2].bytes == 0);                  // 0, 0 and 50
  CHECK_FALSE(m[2].workload.has_value());  // not split where it sent anything
  // An even count: the two middle values' mean.
  CHECK(median_port_bytes({{{"a-b", "n0", 100, std::nullopt}}, {{"a-b", "n0", 301, std::nullopt}}})[0].bytes == 200);
  CHECK(median_port_bytes({}).empty());
}

TEST_CASE("a results folder's finished cells keep what they sent over each end", "[link_bytes]") {
  char dir[] = "/tmp/contend-cells-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/cells.jsonl";
  const auto finished = [&](const std::string& text) {
    std::ofstream(path) << text;
    return finished_cells(dir);
  };
  auto cells = finished(R"({"id": "a.r1", "throughput": 5, "link_bytes": [{"link": "a-b", "node": "n0", "bytes": 64}]})"
                        "\n"
                        R"({"id": "a.r2", "throughput": 6})"
                        "\n");
  REQUIRE(cells.ok());
  CHECK(cells->throughput.size() == 2);
  REQUIRE(cells->link_bytes.count("a.r1") == 1);
  CHECK(cells->link_bytes.at("a.r1").at(0).bytes == 64);
  CHECK(cells->link_bytes.count("a.r2") == 0);
  auto damaged = finished(R"({"id": "a.r1", "throughput": 5, "link_bytes": [{"link": "a-b", "bytes": 64}]})"
                          "\n");
  REQUIRE_FALSE(damaged.ok());
  CHECK_THAT(damaged.error().message, Catch::Contains("cells.jsonl:1") && Catch::Contains("node"));
  std::filesystem::remove_all(dir);
}
