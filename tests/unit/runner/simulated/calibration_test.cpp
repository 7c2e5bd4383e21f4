#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "contend/common/fd.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/runner/simulated/calibration.h"
#include "contend/runner/simulated/simulate.h"
#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using contend::test::resolved;

namespace {

// The iteration logs of `paths`, read as a run reads a cell's.
std::vector<IterationLog> logs_of(std::initializer_list<std::string> paths) {
  std::vector<IterationLog> out;
  for (const std::string& path : paths) {
    auto log = read_iteration_log(path);
    REQUIRE(log.ok());
    out.push_back(std::move(*log));
  }
  return out;
}

std::string temp_path(const std::string& name) {
  return "/tmp/contend-calibration-test-" + std::to_string(::getpid()) + "-" + name;
}

Workload small_workload() {
  Workload w;
  w.stages = 2;
  w.microbatches = 4;
  w.iterations = 3;
  w.warmup = 1;
  w.emulated.forward = std::chrono::milliseconds(5);
  w.emulated.backward = std::chrono::milliseconds(10);
  w.emulated.activation_bytes = 1 << 20;
  return w;
}

PipelineLinks chain(int stages, double bps) {
  PipelineLinks links;
  for (int r = 0; r + 1 < stages; ++r) {
    links.emplace(std::pair{r, r + 1}, RateTrace::constant(bps));
  }
  return links;
}

const Spec kOneFOneB = pipeline::parse_schedule_or_policy("1f1b").value();

}  // namespace

TEST_CASE(
    "the simulator charges the runtime's costs: the hand-off on the sending lane, the end of iteration, "
    "the latency and a burst at line rate",
    "[sim][calibration]") {
  // 2 ranks, one micro-batch: F0 (rank 0), F0 and B0 (rank 1), B0 (rank 0): two transfers in turn.
  const auto s = schedule::make_schedule("gpipe", 2, 1).value();
  auto config = sim::uniform_config(2, 1, 0.010, 0.020, 1000, {});
  const double ideal = sim::simulate(s, config)->makespan_s;
  CHECK(ideal == Approx(0.060));
  config.costs = {sim::RuntimeCosts{0.001, 0.004}};
  CHECK(sim::simulate(s, config)->makespan_s == Approx(0.060 + 2 * 0.001 + 0.004));
  config.default_link.latency_s = 0.0005;
  CHECK(sim::simulate(s, config)->makespan_s == Approx(0.060 + 2 * 0.0015 + 0.004));
  config.costs = {};
  config.default_link.latency_s = 0;
  config.default_link.rate = RateTrace::constant(1e6);
  config.default_link.burst_bytes = RateTrace::constant(1000);  // the whole tensor passes in the burst...
  CHECK(sim::simulate(s, config)->makespan_s == Approx(0.060));
  config.default_link.line_bps = 8e6;  // ...at 1 ms per 1000 bytes
  CHECK(sim::simulate(s, config)->makespan_s == Approx(0.062));
  config.costs = {sim::RuntimeCosts{0, 0}, sim::RuntimeCosts{0, 0}, sim::RuntimeCosts{0, 0}};
  CHECK_FALSE(sim::simulate(s, config).ok());  // three ranks' costs for two ranks
}

TEST_CASE("a calibration reads the runtime's costs from the ranks' iteration lines, warm-up left out",
          "[calibration]") {
  const Workload w = small_workload();
  const std::string path = temp_path("metrics.jsonl");
  {
    std::ofstream out(path);
    // Iteration 0 is the warm-up: its outlandish numbers must not count.
    out << R"({"rank":0,"iteration":0,"forward_s":9,"backward_s":9,"send_wait_s":9,"flush_s":0,"sends":1,"step_s":9})"
        << "\n";
    for (int it = 1; it <= 3; ++it) {
      for (int rank = 0; rank < 2; ++rank) {
        out << R"({"rank":)" << rank << R"(,"iteration":)" << it
            << R"(,"forward_s":0.022,"backward_s":0.042,"send_wait_s":0.0013,"flush_s":0.0005,"sends":4,)"
            << R"("step_s":0.0001})"
            << "\n";
      }
    }
  }
  auto c = measured_costs(w, logs_of({path}));
  std::remove(path.c_str());
  REQUIRE(c.ok());
  CHECK(c->forward_s == Approx(0.022 / 4));  // per micro-batch
  CHECK(c->backward_s == Approx(0.042 / 4));
  CHECK(c->runtime.costs.send_s == Approx(0.0008 / 4));
  CHECK(c->runtime.costs.iteration_s == Approx(0.0006));
  CHECK(c->workload == nlohmann::json(pipeline::stage_costs_json(w)));
  CHECK(calibrated_workload(w, *c).emulated.forward == std::chrono::microseconds(5500));
}

TEST_CASE("the fitted latency is the one that reproduces the measured throughput", "[calibration]") {
  const Workload w = small_workload();
  const PipelineLinks links = chain(2, 1e9);
  Calibration truth;
  truth.runtime = RuntimeModel{sim::RuntimeCosts{0.0002, 0.0003}, 0.0007, 0};
  const auto measured = simulate_cell(w, resolved(kOneFOneB, w), links, truth.runtime);
  REQUIRE(measured.ok());
  const double throughput = *simulated_throughput(*measured, w);
  const auto ideal = simulate_cell(w, resolved(kOneFOneB, w), links);
  CHECK(*simulated_throughput(*ideal, w) > 1.01 * throughput);  // the costs change the prediction
  auto latency = fit_latency(
      [&](double l) -> Result<double> {
        return simulated_throughput(*simulate_cell(w, resolved(kOneFOneB, w), links, {truth.runtime.costs, l, 0}), w);
      },
      throughput);
  REQUIRE(latency.ok());
  CHECK(*latency == Approx(0.0007).margin(1e-6));
  // A run faster than the model with no latency at all: latency 0, not a negative one.
  auto none = fit_latency([&](double) -> Result<double> { return 10.0; }, 11.0);
  CHECK(*none == 0);
}

TEST_CASE("a real run's calibration fits one latency over its scenarios and round-trips through its file",
          "[calibration]") {
  const Workload w = small_workload();
  const ScenarioNetwork fast = chain(2, 2e9);
  const ScenarioNetwork slow = chain(2, 2e8);
  const RuntimeModel truth{sim::RuntimeCosts{0, 0}, 0.0004, 0};
  const double fast_tp = *simulated_throughput(*simulate_cell(w, resolved(kOneFOneB, w), fast, truth), w);
  const double slow_tp = *simulated_throughput(*simulate_cell(w, resolved(kOneFOneB, w), slow, truth), w);
  const std::string metrics = temp_path("run.jsonl");
  {
    std::ofstream out(metrics);
    out << R"({"rank":0,"iteration":1,"forward_s":0.02,"backward_s":0.04,"send_wait_s":0,"flush_s":0,"sends":4,"step_s":0})"
        << "\n";
  }
  auto c = calibrate_from_run(w, resolved(kOneFOneB, w), logs_of({metrics}),
                              {{"fast", &fast, fast_tp}, {"slow", &slow, slow_tp}}, std::nullopt, 0.15);
  std::remove(metrics.c_str());
  REQUIRE(c.ok());
  CHECK(c->runtime.latency_s == Approx(0.0004).margin(2e-6));
  CHECK(c->runtime.start_s == 0.15);
  CHECK(c->source.find("fast") != std::string::npos);
  const std::string file = temp_path("calibration.json");
  REQUIRE(write_calibration(file, *c).ok());
  auto back = read_calibration(file, w);
  REQUIRE(back.ok());
  CHECK(back->runtime.latency_s == Approx(c->runtime.latency_s));
  CHECK(back->runtime.start_s == Approx(0.15));
  CHECK(back->forward_s == Approx(c->forward_s));
  Workload other = w;
  other.emulated.activation_bytes *= 2;
  auto refused = read_calibration(file, other);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("another workload") != std::string::npos);
  REQUIRE(write_file_atomic(file, R"({"schema": "contend.calibration/2", "source": "x", "workload": {},
    "forward_s": -1, "backward_s": 0, "send_s": 0, "iteration_cost_s": 0, "latency_s": 0})")
              .ok());
  auto negative = read_calibration(file, w);
  REQUIRE(write_file_atomic(file + ".1", R"({"schema": "contend.calibration/1", "source": "x", "workload": "y",
    "forward_s": 0, "backward_s": 0, "send_s": 0, "iteration_cost_s": 0, "latency_s": 0})")
              .ok());
  auto older = read_calibration(file + ".1", w);
  std::remove((file + ".1").c_str());
  REQUIRE_FALSE(older.ok());
  CHECK_THAT(older.error().message, Catch::Contains("earlier contend") && Catch::Contains("measure it again"));
  std::remove(file.c_str());
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.error().message.find("/forward_s") != std::string::npos);
}

TEST_CASE("a noisy scenario's latency fit is outvoted by the fit that explains every scenario best", "[calibration]") {
  const Workload w = small_workload();
  const ScenarioNetwork fast = chain(2, 2e9);
  const ScenarioNetwork slow = chain(2, 2e8);
  const RuntimeModel truth{sim::RuntimeCosts{0, 0}, 0.0004, 0};
  const auto at = [&](const ScenarioNetwork& links) {
    return *simulated_throughput(*simulate_cell(w, resolved(kOneFOneB, w), links, truth), w);
  };
  const std::string metrics = temp_path("noisy.jsonl");
  {
    std::ofstream out(metrics);
    out << R"({"rank":0,"iteration":1,"forward_s":0.02,"backward_s":0.04,"send_wait_s":0,"flush_s":0,"sends":4,"step_s":0})"
        << "\n";
  }
  // The slow scenario measured 6% under what the true latency gives: its own fit is far larger,
  // and the median of two fits would have taken it.
  auto c = calibrate_from_run(w, resolved(kOneFOneB, w), logs_of({metrics}),
                              {{"fast", &fast, at(fast)}, {"slow", &slow, 0.94 * at(slow)}});
  std::remove(metrics.c_str());
  REQUIRE(c.ok());
  CHECK(c->runtime.latency_s == Approx(0.0004).margin(5e-6));
  CHECK_THAT(c->source, Catch::Contains("explains all of them best"));
}

TEST_CASE(
    "a real run's calibration fits the line rate a shaper's burst crosses at when one latency cannot explain "
    "its scenarios",
    "[calibration]") {
  // At 2 Gbit/s HTB's burst (4 ms of the rate) holds a whole 1 MiB tensor: it crosses at the
  // line rate, not at once; at 200 Mbit/s the burst is a fifth of it.
  Workload w = small_workload();
  w.stages = 4;
  w.microbatches = 8;
  const ScenarioNetwork fast = chain(4, 2e9);
  const ScenarioNetwork slow = chain(4, 2e8);
  const RuntimeModel truth{sim::RuntimeCosts{0, 0}, 0.0001, 8e9};
  const auto at = [&](const ScenarioNetwork& links, const RuntimeModel& runtime) {
    return *simulated_throughput(*simulate_cell(w, resolved(kOneFOneB, w), links, runtime), w);
  };
  const std::string metrics = temp_path("line.jsonl");
  {
    std::ofstream out(metrics);
    out << R"({"rank":0,"iteration":1,"forward_s":0.04,"backward_s":0.08,"send_wait_s":0,"flush_s":0,"sends":8,"step_s":0})"
        << "\n";
  }
  auto c = calibrate_from_run(w, resolved(kOneFOneB, w), logs_of({metrics}),
                              {{"fast", &fast, at(fast, truth)}, {"slow", &slow, at(slow, truth)}});
  std::remove(metrics.c_str());
  REQUIRE(c.ok());
  CHECK(c->runtime.line_bps == Approx(8e9).epsilon(0.35));  // the grid's step: 8 a decade
  CHECK(at(fast, c->runtime) == Approx(at(fast, truth)).epsilon(0.005));
  CHECK(at(slow, c->runtime) == Approx(at(slow, truth)).epsilon(0.005));
  CHECK_THAT(c->source, Catch::Contains("at the line rate that does"));
  // A latency alone, fitted to the fast scenario, misses the slow one by more.
  auto alone = fit_latency([&](double l) { return Result<double>(at(fast, {truth.costs, l, 0})); }, at(fast, truth));
  REQUIRE(alone.ok());
  CHECK(at(slow, {truth.costs, *alone, 0}) < 0.99 * at(slow, truth));
}

TEST_CASE(
    "a host's calibration keeps loopback's time per byte out of the latency, so a shaped link does not "
    "pay it twice",
    "[calibration]") {
  // A host whose runtime has a fixed 150 us per transfer and carries tensors at 20 Gbit/s over
  // loopback; the probes' throughputs are what that host would measure.
  Workload w = small_workload();
  w.stages = 4;
  w.microbatches = 16;
  w.emulated.activation_bytes = 4 << 20;
  const RuntimeModel truth{sim::RuntimeCosts{0.0001, 0.00015}, 0.00015, 20e9};
  const auto throughput = [&](const Workload& work, const ScenarioNetwork& links, const RuntimeModel& runtime) {
    return *simulated_throughput(*simulate_cell(work, resolved(kOneFOneB, work), links, runtime), work);
  };
  Calibration costs;
  costs.runtime.costs = truth.costs;
  Workload small = w;
  small.emulated.activation_bytes = 4096;
  const LoopbackProbe small_probe{small, costs, throughput(small, chain(4, 20e9), truth)};
  const LoopbackProbe full_probe{w, costs, throughput(w, chain(4, 20e9), truth)};
  auto c = fit_loopback(small_probe, full_probe);
  REQUIRE(c.ok());
  CHECK(c->runtime.latency_s == Approx(0.00015).margin(5e-6));
  CHECK(c->runtime.line_bps == Approx(20e9).epsilon(0.05));
  // On a shaped link (1 Gbit/s of goodput, HTB's burst) the calibration predicts the host.
  const ScenarioNetwork shaped = chain(4, 1e9);
  const double real = throughput(w, shaped, truth);
  CHECK(throughput(w, shaped, c->runtime) == Approx(real).epsilon(0.01));
  // One latency fitted to the workload's tensors with loopback unlimited, as the calibration did
  // before: it holds their 0.4 ms on loopback, and the shaped link pays it again.
  auto one = fit_latency(
      [&](double l) {
        return Result<double>(throughput(w, chain(4, 1e15), {truth.costs, l, 0}));
      },
      full_probe.throughput);
  REQUIRE(one.ok());
  CHECK(*one > 0.0004);
  CHECK(throughput(w, shaped, {truth.costs, *one, 0}) < 0.97 * real);
  // A probe no faster than 1 Tbit/s loopback explains: the line is unlimited (0).
  auto unlimited = fit_line_rate([](double) -> Result<double> { return 10.0; }, 11.0);
  CHECK(*unlimited == 0);
}
