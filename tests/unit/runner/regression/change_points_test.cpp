#include "contend/runner/regression/change_points.h"

#include <catch2/catch.hpp>
#include <random>

using namespace contend::runner;

namespace {

std::vector<double> series(int n, int step_at, double step, double noise, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0, noise);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(100 * (i >= step_at ? 1 + step : 1) * (1 + d(rng)));
  }
  return out;
}

}  // namespace

TEST_CASE("E-divisive finds a 3% step within one run and none in a clean series", "[regression]") {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    INFO("seed " << seed);
    const auto found = change_points(series(30, 18, -0.03, 0.006, seed));
    REQUIRE(found.size() == 1);
    CHECK(found[0].index >= 17);
    CHECK(found[0].index <= 19);
    CHECK(found[0].after / found[0].before - 1 == Approx(-0.03).margin(0.006));
    CHECK(found[0].p <= 0.01);
    ChangePointOptions o;
    o.min_change = 0.01;
    CHECK(change_points(series(30, 30, 0, 0.006, seed + 100), o).empty());
  }
}

TEST_CASE("change points: a step too small to matter is dropped, short series have none", "[regression]") {
  const auto s = series(30, 15, -0.01, 0.001, 9);
  CHECK(change_points(s).size() == 1);
  ChangePointOptions o;
  o.min_change = 0.02;
  CHECK(change_points(s, o).empty());
  CHECK(change_points({100, 100, 90, 90, 90}).empty());  // fewer than 3 runs a side
  CHECK(change_points({}).empty());
  // The same series, the same points: seeded permutations.
  const auto a = change_points(series(40, 20, 0.05, 0.01, 3));
  const auto b = change_points(series(40, 20, 0.05, 0.01, 3));
  REQUIRE(a.size() == b.size());
  CHECK(a[0].index == b[0].index);
  CHECK(a[0].p == b[0].p);
}

TEST_CASE("change points: a loss and its recovery are two points, each with its levels", "[regression]") {
  std::vector<double> s = series(40, 12, -0.05, 0.004, 11);
  for (std::size_t i = 26; i < s.size(); ++i) {
    s[i] *= 1 / 0.95;
  }
  const auto found = change_points(s);
  REQUIRE(found.size() == 2);
  CHECK(found[0].index == Approx(12).margin(1));
  CHECK(found[1].index == Approx(26).margin(1));
  CHECK(found[0].after < found[0].before);
  CHECK(found[1].after > found[1].before);
}
