#include "contend/runner/real/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "contend/common/json.h"
#include "contend/emulator/net/topology.h"
#include "contend/runner/experiment/experiment.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("a transport that asks for an environment gets its node's link interfaces and a host id", "[runner]") {
  pipeline::transports().add(
      {"", "test-env", "a transport that wants an environment (this test's)", {}},
      pipeline::TransportKind{.environment = [](const std::vector<std::string>& ifnames, const std::string& host_id) {
        std::vector<std::string> out = ifnames;
        out.push_back("HOST=" + host_id);
        return out;
      }});
  auto e = parse(R"("scenarios": ["../emulator/scenarios/steady.json"],
    "workload": {"stages": 4, "backend": "cpu", "transport": "test-env"}, "schedules": ["1f1b"])");
  REQUIRE(e.ok());
  const auto given = workload_given(worker_options(*e, expand(*e)[0]));
  REQUIRE(given.ok());
  CHECK(given->transport.str() == "test-env");
  CHECK(*given == e->workload);  // cpu: the model's members too
  // The middle node of a chain has two links; the transport gets exactly those, and its namespace.
  const auto plan = emulator::plan_topology(e->scenarios[0], "r");
  const std::string n1 = e->scenarios[0].nodes[1];
  CHECK(worker_environment(e->workload.transport, plan, n1) ==
        std::vector<std::string>{plan.links[0].to.ifname, plan.links[1].from.ifname,
                                 "HOST=" + emulator::node_netns("r", n1)});
  auto tcp = parse(kGood);
  REQUIRE(tcp.ok());
  CHECK(worker_environment(tcp->workload.transport, plan, n1).empty());
}

TEST_CASE("a schedule entry may name its own transport and name, so one run compares how sends behave", "[runner]") {
  auto e = parse(R"("scenarios": ["../emulator/scenarios/steady.json"],
    "workload": {"stages": 4, "microbatches": 8, "fwd": "5ms", "activation": "256KiB"},
    "schedules": ["zb", {"schedule": "zb", "transport": "tcp:sends=wait"},
                  {"schedule": "1f1b", "transport": "tcp:sends=wait", "name": "megatron-1f1b"}],
    "baseline": "megatron-1f1b", "repetitions": 1)");
  REQUIRE(e.ok());
  REQUIRE(e->schedules.size() == 3);
  CHECK(e->schedules[1].name == "zb over tcp:sends=wait");
  CHECK(e->baseline == "megatron-1f1b");
  const auto cells = expand(*e);
  REQUIRE(cells.size() == 3);
  CHECK(cells[0].transport.str() == "tcp");
  CHECK(cells[1].transport.str() == "tcp:sends=wait");
  CHECK(cells[1].id == "steady.zb-over-tcp-sends-wait.r1");
  CHECK(cells[2].id == "steady.megatron-1f1b.r1");
  const auto given = workload_given(worker_options(*e, cells[1]));
  REQUIRE(given.ok());
  CHECK(given->transport.str() == "tcp:sends=wait");
  const std::string base = R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"stages": 4}, )";
  CHECK_THAT(error_of(base + R"("schedules": ["zb", {"schedule": "zb"}])"), Catch::Contains("appears twice"));
  CHECK_THAT(error_of(base + R"("schedules": [{"schedule": "zb", "sends": "wait"}])"), Catch::Contains("sends"));
  CHECK_THAT(error_of(base + R"("schedules": [{"schedule": "zb", "transport": "pigeon"}])"),
             Catch::Contains("/schedules/0/transport"));
  CHECK_THAT(error_of(base + R"("schedules": ["zb"], "baseline": "fast")"),
             Catch::Contains("not one of the schedules"));
}

TEST_CASE("on a fabric each rank is reached at its placed host's NIC, and a host without one is named", "[runner]") {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "f", "duration": "10s",
          "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "1Gbit"}},
          "placement": ["h2", "h0"]})",
      "f.json", nullptr);
  REQUIRE(s.ok());
  s->placed = 2;
  const auto plan = emulator::plan_topology(*s, "r");
  auto ends = rank_ends(*s, plan);
  REQUIRE(ends.ok());
  REQUIRE(ends->size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto nic = std::find_if(plan.links.begin(), plan.links.end(),
                                  [&](const emulator::LinkPlan& l) { return l.from.node == s->nodes[r]; });
    REQUIRE(nic != plan.links.end());
    CHECK((*ends)[r].address == emulator::strip_prefix_length(nic->from.address));
  }
  // b hangs on a alone, so it has no NIC on the switch: refused, not a rank without an address.
  auto odd = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "o", "duration": "10s", "nodes": ["a", "b"], "switches": ["sw"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"},
                    {"name": "asw", "from": "a", "to": "sw", "rate": "1Gbit"}]})",
      "o.json", nullptr);
  REQUIRE(odd.ok());
  auto none = rank_ends(*odd, emulator::plan_topology(*odd, "r"));
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message, Catch::Contains("host b runs rank 1 but has no link to a switch"));
}
