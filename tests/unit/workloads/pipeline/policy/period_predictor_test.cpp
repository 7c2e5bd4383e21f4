// Prediction of periodic preemption from the link history (period_predictor.h).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "contend/pipeline/policy/period_predictor.h"

using namespace contend;
using namespace contend::pipeline;

namespace {
// One link sampled every `dt` s for `seconds`: 1 Gbit/s, 100 Mbit/s while `low(t)`.
template <typename Low>
PeriodPredictor history(double dt, double seconds, Low low) {
  PeriodPredictor p(1);
  for (double t = 0; t < seconds; t += dt) {
    p.record(t, {low(t) ? 100e6 : 1e9});
  }
  return p;
}
bool periodic_low(double t) {  // 2 s of every 4 s from 1 s, as emulator/scenarios/paper/paper4-heavy.json
  return t >= 1 && std::fmod(t - 1, 4.0) < 2;
}
}  // namespace

TEST_CASE("a periodic drop is found from iteration-spaced samples and the next one predicted", "[predict]") {
  const PeriodPredictor p = history(0.6, 20, periodic_low);
  const auto period = p.period(0);
  REQUIRE(period.has_value());
  CHECK(period->period_s == Approx(4).margin(0.6));
  CHECK(period->on_s == Approx(2).margin(0.6));
  CHECK(period->low_bps == Approx(100e6));
  CHECK(period->high_bps == Approx(1e9));
  // At 20.2 s the link is high (17-19 was low); the next drop comes at 21 s, within a second.
  const auto traces = p.predict(20.2);
  REQUIRE(traces.has_value());
  CHECK((*traces)[0].rate_at(0) == Approx(1e9));
  CHECK((*traces)[0].rate_at(1.3) == Approx(100e6));  // 21.5 s: inside the drop
  CHECK((*traces)[0].rate_at(3.6) == Approx(1e9));    // 23.8 s: recovered
}

TEST_CASE("too few drops, or drops at random, predict nothing", "[predict]") {
  CHECK_FALSE(history(0.6, 10, periodic_low).predict(10).has_value());  // 3 drops: not yet believed
  CHECK_FALSE(history(0.6, 60, [](double) { return false; }).predict(60).has_value());
  int predicted = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    // Drops of 1.5 s with exponential gaps of mean 3 s, as the random pattern plays them.
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> gap(1.0 / 3);
    std::vector<std::pair<double, double>> drops;
    for (double t = gap(rng); t < 60; t += 1.5 + gap(rng)) {
      drops.emplace_back(t, t + 1.5);
    }
    const PeriodPredictor p = history(0.6, 60, [&](double t) {
      return std::any_of(drops.begin(), drops.end(), [&](const auto& d) { return t >= d.first && t < d.second; });
    });
    predicted += p.predict(60).has_value() ? 1 : 0;
  }
  CHECK(predicted == 0);
}

TEST_CASE("a reading far above the rest, as a token bucket's burst gives, hides no period", "[predict]") {
  // The first sample 11 Gbit/s (a probe timed within the bucket), one more at 4 Gbit/s at 11.4 s:
  // the high level is the highest rate held over two samples, so 1 Gbit/s stays high.
  PeriodPredictor p(1);
  p.record(0, {11e9});
  for (double t = 0.6; t < 20; t += 0.6) {
    p.record(t, {std::abs(t - 11.4) < 0.05 ? 4e9 : periodic_low(t) ? 100e6 : 1e9});
  }
  const auto period = p.period(0);
  REQUIRE(period.has_value());
  CHECK(period->period_s == Approx(4).margin(0.6));
  CHECK(period->high_bps == Approx(1e9));
  CHECK(period->low_bps == Approx(100e6));
}

// Samples as a real run's decisions come: an iteration apart, longer while the link is low.
PeriodPredictor slow_while_low(std::uint64_t seed, double seconds) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  PeriodPredictor p(1);
  for (double t = 0.1; t < seconds; t += (periodic_low(t + 0.4) ? 1.3 : 0.4) * jitter(rng)) {
    p.record(t, {periodic_low(t) ? 100e6 : 1e9});
  }
  return p;
}

TEST_CASE("drops dated by samples further apart while the link is low still show their period", "[predict]") {
  // Each drop is dated to within the spacing of the two samples around it, up to 1.6 s here,
  // where the median spacing is about 0.4 s (which alone as the tolerance found 12 of 20).
  int found = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    found += slow_while_low(seed, 40).period(0).has_value() ? 1 : 0;
  }
  CHECK(found >= 18);
}
