#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "contend/pipeline/policy/adaptive.h"
#include "contend/schedule/generators.h"
#include "contend/sim/simulator.h"
#include "unit/workloads/pipeline/policy/fixtures.h"

using namespace contend;
using namespace contend::pipeline;
using namespace contend::policy_tests;

namespace {
Measurements uniform(double bps) {
  Measurements m;
  m.stages.assign(kP, StageMeasurement{0.010, 0.020, kAct, kAct});
  m.links.assign(kP - 1, LinkMeasurement{bps, 0, 0});  // the wire alone
  return m;
}

// The k an independent sweep with the simulator finds fastest: the smallest within 0.5% (the
// controller's default `lean`) of the fastest.
int sweep_best(double bps) {
  std::vector<double> times;
  for (int k = 1; k <= kM; ++k) {
    sim::LinkModel link;
    link.rate = RateTrace::constant(bps);
    const auto config = sim::uniform_config(kP, 1, 0.010, 0.020, kAct, link);
    times.push_back(sim::simulate(schedule::kfkb(kP, kM, k), config)->makespan_s);
  }
  const double fastest = *std::min_element(times.begin(), times.end());
  for (int k = 1; k <= kM; ++k) {
    if (times[k - 1] <= fastest * 1.005) {
      return k;
    }
  }
  return 0;
}
}  // namespace

TEST_CASE("with constant high bandwidth adaptive kFkB picks k=1", "[adaptive]") {
  AdaptiveController c(kP, kM, {});
  auto d = c.decide(0, uniform(400e9));
  REQUIRE(d.ok());
  CHECK(d->k == 1);
  CHECK(d->predicted_s.size() == kM);
}

TEST_CASE("with constant low bandwidth it picks the k the simulator's sweep says is best", "[adaptive]") {
  for (double bps : {500e6, 1e9, 2e9}) {
    INFO(bps);
    AdaptiveController c(kP, kM, {});
    auto d = c.decide(0, uniform(bps));
    REQUIRE(d.ok());
    CHECK(d->k == sweep_best(bps));
    CHECK(d->k > 1);
  }
}

TEST_CASE("it never exceeds the memory limit", "[adaptive]") {
  AdaptiveOptions o;
  o.memory_limit_bytes = 8 * kAct;  // stage 0 holds min(m, 4k) activations: k <= 2
  AdaptiveController c(kP, kM, o);
  CHECK(c.feasible(uniform(1e9)) == std::vector<int>{1, 2});
  auto d = c.decide(0, uniform(200e6));  // slow: a larger k would win if it fitted
  REQUIRE(d.ok());
  CHECK(d->k <= 2);
  for (const auto& [k, t] : d->predicted_s) {
    CHECK(k <= 2);
  }
  AdaptiveOptions none;
  none.max_inflight = 3;  // even k=1 holds 4 on stage 0
  AdaptiveController impossible(kP, kM, none);
  CHECK_THAT(impossible.decide(0, uniform(1e9)).error().message, Catch::Contains("fits the memory limit"));
}

namespace {
// The bandwidth at which the best k (to 1%) stops being 1, by bisection: around it, k=1 and the
// next k are predicted within about 1% of each other, so measurement noise decides between them.
double decision_boundary() {
  double lo = 100e6;  // k > 1 here
  double hi = 400e9;  // k = 1 here
  REQUIRE(sweep_best(lo) > 1);
  REQUIRE(sweep_best(hi) == 1);
  for (int i = 0; i < 40; ++i) {
    const double mid = std::sqrt(lo * hi);
    (sweep_best(mid) == 1 ? hi : lo) = mid;
  }
  return hi;
}

// How often k changes over 60 decisions whose measured rate is `bps` times +/-`noise`, in turn.
int switches(const AdaptiveOptions& o, double bps, double noise) {
  AdaptiveController c(kP, kM, o);
  int count = 0;
  int last = 0;
  for (int it = 0; it < 60; ++it) {
    auto d = c.decide(it, uniform(bps * (it % 2 == 0 ? 1 + noise : 1 - noise)));
    REQUIRE(d.ok());
    count += it > 0 && d->k != last ? 1 : 0;
    last = d->k;
  }
  return count;
}
}  // namespace

TEST_CASE("hysteresis holds k where measurement noise crosses a decision boundary", "[adaptive]") {
  const double boundary = decision_boundary();
  AdaptiveOptions none;
  none.hysteresis = 0;
  // Without hysteresis this noise moves k at (nearly) every decision: the test's noise matters.
  CHECK(switches(none, boundary, 0.03) >= 50);
  CHECK(switches(AdaptiveOptions{}, boundary, 0.03) <= 1);
}

TEST_CASE("a change of the network beyond noise is chosen for afresh, whatever the hysteresis", "[adaptive]") {
  AdaptiveOptions o;
  o.hysteresis = 0.9;  // no predicted gain is this large: only the change of the network moves k
  AdaptiveController c(kP, kM, o);
  CHECK(c.decide(0, uniform(400e9))->k == 1);
  auto d = c.decide(1, uniform(500e6));
  REQUIRE(d.ok());
  CHECK(d->switched);
  CHECK(d->k == sweep_best(500e6));
  // (Noise across a decision boundary meets the margin: the hysteresis test above.)
}

TEST_CASE("the latency fitted to a measured iteration is the latency it was measured with", "[adaptive]") {
  for (const double latency : {0.0, 200e-6, 1e-3, 4e-3}) {
    INFO(latency);
    sim::LinkModel link;
    link.rate = RateTrace::constant(2e9);
    link.latency_s = latency;
    const auto config = sim::uniform_config(kP, 1, 0.010, 0.020, kAct, link);
    const double measured = sim::simulate(schedule::kfkb(kP, kM, 1), config)->makespan_s;
    AdaptiveController c(kP, kM, {});  // runs kfkb:k=1 until it decides
    auto fitted = c.fit_latency(uniform(2e9), measured);
    REQUIRE(fitted.ok());
    CHECK(*fitted == Approx(latency).margin(2e-6));
  }
  AdaptiveController c(kP, kM, {});
  CHECK(c.fit_latency(uniform(2e9), 1e-3).value() == 0);  // faster than the wire allows: none
}

TEST_CASE("a bandwidth step moves k at the next decision", "[adaptive]") {
  AdaptiveController c(kP, kM, {});
  const int fast_k = sweep_best(400e9);
  const int slow_k = sweep_best(500e6);
  REQUIRE(fast_k != slow_k);
  for (int it = 0; it < 10; ++it) {
    auto d = c.decide(it, uniform(it < 5 ? 400e9 : 500e6));  // the step lands in iteration 5's measurement
    REQUIRE(d.ok());
    CHECK(d->k == (it < 5 ? fast_k : slow_k));
  }
}

TEST_CASE("decisions are made every period iterations and measurements must fit the pipeline", "[adaptive]") {
  AdaptiveOptions o;
  o.period = 4;
  AdaptiveController c(kP, kM, o);
  CHECK(c.decide(0, uniform(1e9))->evaluated);
  CHECK_FALSE(c.decide(1, uniform(1e9))->evaluated);
  CHECK(c.decide(4, uniform(1e9))->evaluated);
  Measurements wrong = uniform(1e9);
  wrong.links.pop_back();
  CHECK_THAT(c.decide(8, wrong).error().message, Catch::Contains("the pipeline has 4 stages"));
}
