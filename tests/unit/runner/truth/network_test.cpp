#include "contend/runner/truth/network.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "contend/runner/simulated/calibration.h"
#include "contend/runner/simulated/simulate.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("the workload's share of a link follows the scenario's rate changes and flows", "[runner]") {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", "nodes": ["a", "b", "c"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"},
                    {"name": "cb", "from": "c", "to": "b", "rate": "500Mbit", "preemption": "fair"}],
          "timeline": [{"at": "2s", "link": "ab", "rate": "100Mbit"},
                       {"at": "5s", "flow": {"name": "f", "from": "b", "to": "c", "rate": "400Mbit", "duration": "5s"}}]})",
      "t.json", nullptr);
  REQUIRE(s.ok());
  auto rates = workload_rates(*s);
  REQUIRE(rates.ok());
  REQUIRE(rates->size() == 2);
  CHECK((*rates)[0].rate_at(1) == Approx(kTcpGoodput * 1e9));
  CHECK((*rates)[0].rate_at(3) == Approx(kTcpGoodput * 100e6));
  CHECK((*rates)[1].rate_at(4) == Approx(kTcpGoodput * 500e6));
  CHECK((*rates)[1].rate_at(6) == Approx(kTcpGoodput * 250e6));  // fair: half is the workload's
  CHECK((*rates)[1].rate_at(11) == Approx(kTcpGoodput * 500e6));
}

TEST_CASE("a background flow takes from its own direction of a link only: each end shapes what it sends", "[runner]") {
  // A paced 600 Mbit/s flow from b to a, against the activations, with the gradients.
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", "nodes": ["a", "b"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"}],
          "timeline": [{"at": "0s", "flow": {"name": "f", "from": "b", "to": "a", "protocol": "udp",
                                               "rate": "600Mbit"}}]})",
      "t.json", nullptr);
  REQUIRE(s.ok());
  auto net = scenario_network(*s);
  REQUIRE(net.ok());
  CHECK(net->links.at({0, 1}).rate_at(1) == Approx(kTcpGoodput * 1e9));   // a -> b: untouched
  CHECK(net->back.at({0, 1}).rate_at(1) == Approx(kTcpGoodput * 400e6));  // b -> a: what the flow leaves
  CHECK((*workload_rates(*s))[0].rate_at(1) == Approx(kTcpGoodput * 1e9));
  // Simulated, the flow slows the gradients alone: between the link fast both ways and slow both.
  const Workload w = two_stages();
  const Spec one_f_one_b = pipeline::parse_schedule_or_policy("1f1b").value();
  const auto throughput = [&](const ScenarioNetwork& n) {
    return *simulated_throughput(*simulate_cell(w, resolved(one_f_one_b, w), n), w);
  };
  const ScenarioNetwork fast(PipelineLinks{{{0, 1}, RateTrace::constant(kTcpGoodput * 1e9)}});
  const ScenarioNetwork slow(PipelineLinks{{{0, 1}, RateTrace::constant(kTcpGoodput * 400e6)}});
  CHECK(throughput(*net) < 0.97 * throughput(fast));
  CHECK(throughput(*net) > 1.03 * throughput(slow));
}

TEST_CASE("a link shaped one way only leaves the other way to the unshaped path", "[runner]") {
  const auto scenario = [](const char* direction) {
    return emulator::parse_scenario(
        std::string(R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", "nodes": ["a", "b"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "200Mbit", "direction": ")") +
            direction + R"("}]})",
        "t.json", nullptr);
  };
  auto forward = scenario("forward");
  auto backward = scenario("backward");
  auto both = scenario("both");
  REQUIRE((forward.ok() && backward.ok() && both.ok()));
  auto net = scenario_network(*forward);
  REQUIRE(net.ok());
  CHECK(net->links.at({0, 1}).rate_at(1) == Approx(kTcpGoodput * 200e6));  // a -> b: shaped
  CHECK(std::isinf(net->back.at({0, 1}).rate_at(1)));                      // b -> a: not
  CHECK(std::isinf((*workload_rates(*backward))[0].rate_at(1)));
  // Simulated, the gradients cross at the measured line rate: one way shaped lies between both
  // ways and neither.
  const Workload w = two_stages();
  RuntimeModel runtime;
  runtime.line_bps = 10e9;
  const Spec one_f_one_b = pipeline::parse_schedule_or_policy("1f1b").value();
  const auto throughput = [&](const emulator::Scenario& s) {
    return *simulated_throughput(*simulate_cell(w, resolved(one_f_one_b, w), *scenario_network(s), runtime), w);
  };
  CHECK(throughput(*forward) > 1.05 * throughput(*both));  // 1.10 here: the ways overlap
  CHECK(throughput(*backward) == Approx(throughput(*forward)).epsilon(0.05));
  const ScenarioNetwork line(PipelineLinks{{{0, 1}, RateTrace::constant(runtime.line_bps)}});
  CHECK(throughput(*forward) <
        0.9 * *simulated_throughput(*simulate_cell(w, resolved(one_f_one_b, w), line, runtime), w));
}

TEST_CASE("a scenario's network is written once and read back as the same rates and stalls", "[runner]") {
  NetworkTruth truth;
  truth.links = {RateTrace::constant(956e6), RateTrace::from_points({{0, 956e6}, {2.5, 95.6e6}, {4, 956e6}}).value()};
  StallSchedule stall;
  stall.add_at_time(1.0, 0.03);
  stall.add_at_iteration(15, 0.02);
  stall.add_at_iteration(85, 0);
  truth.stalls[{1, 2}] = stall;
  const std::string path = "/tmp/contend-truth-test-" + std::to_string(::getpid()) + ".json";
  REQUIRE(write_truth(path, "periodic", truth).ok());
  auto read = read_truth(path);
  std::remove(path.c_str());
  REQUIRE(read.ok());
  REQUIRE(read->links.size() == 2);
  CHECK(read->links[0].rate_at(10) == 956e6);
  CHECK(read->links[1].rate_at(3) == 95.6e6);
  CHECK(read->links[1].rate_at(5) == 956e6);
  REQUIRE(read->stalls.count({1, 2}) == 1);
  const StallSchedule& back = read->stalls.at({1, 2});
  CHECK(back.at(0.5, 0) == 0);
  CHECK(back.at(1.5, 0) == 0.03);
  CHECK(back.at(0.5, 20) == 0.02);
  CHECK(back.at(0.5, 90) == 0);
  CHECK(read->back.empty());  // none written: the other way is as `links`
  // The other way where it differs, a way nothing shapes among them (JSON holds no infinity).
  truth.back = {RateTrace::unlimited(), RateTrace::constant(50e6)};
  REQUIRE(write_truth(path, "periodic", truth).ok());
  read = read_truth(path);
  REQUIRE(read.ok());
  REQUIRE(read->back.size() == 2);
  CHECK(std::isinf(read->back[0].rate_at(1)));
  CHECK(read->back[1].rate_at(1) == 50e6);
  std::ofstream(path) << R"({"schema": "contend.truth/1", "scenario": "s", "links": [[[0, 1e9]], [[0, 1e9]]],
                            "back": [[[0, 1e9]]]})";
  read = read_truth(path);
  std::remove(path.c_str());
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(read.error().message, Catch::Contains("/back") && Catch::Contains("one list of points per link"));
  CHECK_THAT(read_truth("/nonexistent/truth.json").error().message, Catch::Contains("/nonexistent/truth.json"));
  // A scenario's traces may hold a million points: its truth file is past the 4 MiB and 2^20
  // values other files are held to, and still read back (its own limits).
  std::vector<RateTrace::Point> points;
  for (int i = 0; i < 400000; ++i) {
    points.push_back({0.001 * i, i % 2 == 0 ? 956e6 : 95.6e6});
  }
  NetworkTruth large;
  large.links = {RateTrace::from_points(points).value()};
  REQUIRE(write_truth(path, "trace", large).ok());
  auto big = read_truth(path);
  std::remove(path.c_str());
  REQUIRE(big.ok());
  CHECK(big->links.at(0).rate_at(399.9995) == 95.6e6);
}
