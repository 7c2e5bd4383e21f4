#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "contend/runner/simulated/fidelity.h"

using namespace contend;
using namespace contend::runner;

namespace {

const std::string kExperiments = std::string(CONTEND_SOURCE_DIR) + "/experiments/suites/fidelity";  // the suite

const emulator::Scenario& scenario_of(const Experiment& e, const std::string& name) {
  for (const emulator::Scenario& s : e.scenarios) {
    if (s.name == name) {
      return s;
    }
  }
  FAIL("no scenario " << name);
  return e.scenarios.front();
}

}  // namespace

TEST_CASE("a cell's configuration says what its scenario varies", "[fidelity]") {
  auto flows = load_experiment(kExperiments + "/fidelity-flows.json");
  REQUIRE(flows.ok());
  const FidelityConfig tcp = fidelity_config(flows->workload, scenario_of(*flows, "tcp-fair"), "1f1b", false);
  CHECK(tcp.stages == 4);
  CHECK(tcp.microbatches == 16);
  CHECK(tcp.activation_bytes == 2 << 20);
  CHECK(tcp.tcp_flow);
  CHECK_FALSE(tcp.udp_flow);
  CHECK_FALSE(tcp.rate_changes);
  CHECK(tcp.preemption == "fair");
  CHECK(tcp.slowest_bps == Approx(0.5 * 1e9 * 1448 / 1514).epsilon(0.01));  // half the link's goodput
  const FidelityConfig udp = fidelity_config(flows->workload, scenario_of(*flows, "udp-split"), "kfkb:k=2", false);
  CHECK(udp.udp_flow);
  CHECK(udp.preemption == "split");
  auto ramp = load_experiment(kExperiments + "/fidelity-ramp.json");
  REQUIRE(ramp.ok());
  const FidelityConfig r = fidelity_config(ramp->workload, scenario_of(*ramp, "hetero-ramp"), "adaptive", true);
  CHECK(r.rate_changes);
  CHECK_FALSE(r.tcp_flow);
  CHECK(r.preemption.empty());
  CHECK(r.slowest_bps == Approx(150e6 * 1448 / 1514).epsilon(0.01));
  auto stall = load_experiment(kExperiments + "/fidelity-stall.json");
  REQUIRE(stall.ok());
  CHECK(fidelity_config(stall->workload, stall->scenarios.front(), "1f1b", false).stall);
  CHECK_FALSE(fidelity_config(stall->workload, stall->scenarios.front(), "1f1b", false).closed_loop);
}

TEST_CASE("a cell beside a closed-loop job, which no measured cell has, gets no ratio", "[fidelity]") {
  auto jobs = load_experiment(std::string(CONTEND_SOURCE_DIR) + "/experiments/examples/fabric-jobs.json");
  REQUIRE(jobs.ok());
  CHECK(fidelity_config(jobs->workload, scenario_of(*jobs, "spread-dp"), "1f1b", false).closed_loop);
  CHECK_FALSE(fidelity_config(jobs->workload, scenario_of(*jobs, "spread-idle"), "1f1b", false).closed_loop);
  auto table = load_fidelity(std::string(CONTEND_SOURCE_DIR) + "/experiments/suites/fidelity/measured.json");
  REQUIRE(table.ok());
  const std::string note = fidelity_note(*table, *jobs, "ideal");
  CHECK_THAT(note, Catch::Matches("(.|\\n)*spread-dp +1f1b +n/a (.|\\n)*"));
  CHECK_THAT(note, Catch::Matches("(.|\\n)*spread-idle +1f1b +[0-9.]+ (.|\\n)*"));
  CHECK_THAT(note, Catch::Contains("no measured cell runs beside a closed-loop job"));
}

TEST_CASE("the nearest measured cell is the one most alike", "[fidelity]") {
  FidelityConfig base;
  base.stages = 4;
  base.microbatches = 16;
  base.activation_bytes = 1 << 20;
  base.compute_s = 0.03;
  base.slowest_bps = 1e9;
  base.schedule = "1f1b";
  FidelityTable t;
  t.cells.resize(3);
  t.cells[0].config = base;
  t.cells[0].config.stages = 16;
  t.cells[1].config = base;
  t.cells[1].config.tcp_flow = true;
  t.cells[1].config.preemption = "fair";
  t.cells[2].config = base;
  t.cells[2].config.schedule = "kfkb:k=2";
  CHECK(fidelity_distance(base, base) == 0);
  CHECK(nearest_cell(t, base) == &t.cells[2]);  // another schedule is nearer than four times the stages
  FidelityConfig flows = base;
  flows.tcp_flow = true;
  flows.preemption = "fair";
  flows.microbatches = 32;
  CHECK(nearest_cell(t, flows) == &t.cells[1]);  // a TCP flow outweighs a doubling of micro-batches
  CHECK(nearest_cell(FidelityTable{}, base) == nullptr);
}

TEST_CASE("fidelity measurements are read or refused, naming the field", "[fidelity]") {
  const auto refused = [](const std::string& text) {
    auto t = parse_fidelity(text, "measured.json");
    REQUIRE_FALSE(t.ok());
    return t.error().message;
  };
  auto ok = parse_fidelity(R"({"schema": "contend.fidelity/1", "measured": "today", "cells": [
    {"experiment": "fidelity-two.json", "scenario": "two-100Mbit", "schedule": "1f1b", "real": 750,
     "ideal": 1.01, "host": 0.99, "own": 1.0}]})",
                           "measured.json");
  REQUIRE(ok.ok());
  CHECK(ok->cells.at(0).host == Approx(0.99));
  CHECK_THAT(refused(R"({"schema": "contend.fidelity/1", "measured": "x", "cells": [{"experiment": "a",
    "scenario": "b", "schedule": "c", "real": 0, "ideal": 1, "host": 1, "own": 1}]})"),
             Catch::Contains("/cells/0/real"));
  CHECK_THAT(refused(R"({"schema": "contend.fidelity/1", "measured": "x", "cells": [{"experiment": "a",
    "scenario": "b", "schedule": "c", "real": 1, "ideal": -1, "host": 1, "own": 1}]})"),
             Catch::Contains("/cells/0/ideal"));
  CHECK_THAT(refused(R"({"schema": "contend.fidelity/1", "measured": "x"})"), Catch::Contains("cells"));
  CHECK_THAT(refused(R"({"schema": "contend.fidelity/2", "measured": "x", "cells": []})"), Catch::Contains("schema"));
}

TEST_CASE("the shipped measurements cover every cell of the fidelity suite", "[fidelity]") {
  auto t = load_fidelity(kExperiments + "/measured.json");
  REQUIRE(t.ok());
  std::size_t cells = 0;
  std::vector<std::string> suite;  // experiments/suites/fidelity/fidelity-*.json
  for (const auto& entry : std::filesystem::directory_iterator(kExperiments)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("fidelity-") && name.ends_with(".json")) {
      suite.push_back(name);
    }
  }
  REQUIRE(suite.size() >= 6);
  for (const std::string& name : suite) {
    auto e = load_experiment(kExperiments + "/" + name);
    REQUIRE(e.ok());
    for (const emulator::Scenario& s : e->scenarios) {
      for (const ScheduleEntry& entry : e->schedules) {
        INFO(name << " " << s.name << " / " << entry.name);
        const FidelityConfig mine = fidelity_config(e->workload, s, entry.name, false);
        const FidelityCell* near = nearest_cell(*t, mine);
        REQUIRE(near != nullptr);
        CHECK(near->experiment == name);
        CHECK(near->scenario == s.name);
        CHECK(near->schedule == entry.name);
        ++cells;
      }
    }
  }
  CHECK(t->cells.size() == cells);
}
