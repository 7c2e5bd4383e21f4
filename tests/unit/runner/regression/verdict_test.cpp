#include "contend/runner/regression/verdict.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

using namespace contend::runner;

namespace {

// n repetitions around `level` with a relative noise of `noise` (normal), seeded.
std::vector<double> noisy(double level, double noise, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0, noise);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(level * (1 + d(rng)));
  }
  return out;
}

Summary one_cell(const std::vector<double>& samples, const std::vector<double>& baseline = {}) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> t{{{"s", "kfkb"}, samples}};
  std::vector<std::pair<std::string, std::string>> order{{"s", "kfkb"}};
  if (!baseline.empty()) {
    t[{"s", "1f1b"}] = baseline;
    order.insert(order.begin(), {"s", "1f1b"});
  }
  return summarize("e", "1f1b", "real", order, t);
}

}  // namespace

TEST_CASE("Mann-Whitney: exact p-values of small samples, the normal approximation of large ones", "[regression]") {
  // Every value now above every value before: U at its extreme, p = 2 / C(10, 5).
  CHECK(mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}) == Approx(2.0 / 252));
  CHECK(mann_whitney_p({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}) == Approx(2.0 / 252));
  CHECK(smallest_p(5, 5) == Approx(2.0 / 252));
  CHECK(smallest_p(3, 3) == Approx(0.1));  // three repetitions a side can never reach 5%
  CHECK(smallest_p(4, 4) == Approx(2.0 / 70));
  // Interleaved: nothing to see.
  CHECK(mann_whitney_p({1, 3, 5, 7}, {2, 4, 6, 8}) > 0.5);
  CHECK(mann_whitney_p({1, 2, 3}, {1, 2, 3}) == Approx(1));
  // 60 a side (the normal approximation): a clear shift, and none.
  CHECK(mann_whitney_p(noisy(100, 0.01, 60, 1), noisy(97, 0.01, 60, 2)) < 1e-6);
  CHECK(mann_whitney_p(noisy(100, 0.01, 60, 3), noisy(100, 0.01, 60, 4)) > 0.01);
}

TEST_CASE("the ratio's estimate and interval cover a known shift", "[regression]") {
  const auto before = noisy(100, 0.005, 8, 5);
  const auto after = noisy(97, 0.005, 8, 6);
  const Shift s = shift_of(before, after);
  CHECK(s.ratio == Approx(0.97).epsilon(0.005));
  CHECK(s.low < 0.97);
  CHECK(s.high > 0.97);
  CHECK(s.high < 1);
  CHECK(s.confidence >= 0.95);
  CHECK(s.p < 0.01);
  // Repetitions that repeat themselves exactly (a simulated run): the difference is the change.
  const Shift exact = shift_of({50, 50, 50}, {45, 45, 45});
  CHECK(exact.exact);
  CHECK(exact.ratio == Approx(0.9));
  CHECK(exact.p == 0);
  CHECK(shift_of({50, 50}, {50, 50}).p == 1);
}

TEST_CASE("verdicts: a loss beyond the tolerance fails, a small significant one and noise pass", "[regression]") {
  const Summary ref = one_cell(noisy(100, 0.005, 5, 7));
  VerdictOptions o;
  o.tolerance = 0.02;
  auto loss = verdicts(one_cell(noisy(96.5, 0.005, 5, 8)), ref, o);
  REQUIRE(loss.size() == 1);
  CHECK(loss[0].change == Change::kSlower);
  CHECK(loss[0].fails);
  CHECK_THAT(loss[0].why, Catch::Contains("slower by 3.") && Catch::Contains("beyond the 2.0% tolerance"));
  auto small = verdicts(one_cell(noisy(99.3, 0.001, 5, 9)), one_cell(noisy(100, 0.001, 5, 10)), o);
  CHECK(small[0].change == Change::kSlower);
  CHECK_FALSE(small[0].fails);
  CHECK_THAT(small[0].why, Catch::Contains("within the 2.0% tolerance"));
  auto same = verdicts(one_cell(noisy(100, 0.002, 5, 11)), ref, o);
  CHECK_FALSE(same[0].fails);
  CHECK(same[0].change != Change::kSlower);
  auto faster = verdicts(one_cell(noisy(110, 0.005, 5, 12)), ref, o);
  CHECK(faster[0].change == Change::kFaster);
  CHECK_FALSE(faster[0].fails);
  CHECK_THAT(verdict_table(loss, "samples/s", o),
             Catch::Contains("slower") && Catch::Contains("5+5") && Catch::Contains("p: Mann-Whitney U"));
}

TEST_CASE("paired: a round's drift cancels in its pair's ratio, so a loss the unpaired test misses is found",
          "[regression]") {
  // Five rounds 20% apart (the machine drifts between them), the head 2.5-3.5% slower in each.
  const std::vector<double> base{100, 110, 95, 105, 90};
  const std::vector<double> head{97.5, 106.2, 92.0, 102.0, 87.6};
  CHECK(mann_whitney_p(base, head) > 0.5);  // unpaired: the drift hides it
  const Shift s = paired_shift_of(base, head);
  CHECK(s.ratio == Approx(0.97072).epsilon(1e-4));  // the geometric mean of the pairs' ratios
  CHECK(s.p == Approx(7.299e-5).epsilon(1e-3));     // t = -16.83 with 4 degrees of freedom
  CHECK(s.low == Approx(0.96598).epsilon(1e-4));    // +/- t(0.975, 4) standard errors
  CHECK(s.high == Approx(0.97549).epsilon(1e-4));
  CHECK(s.confidence == Approx(0.95));
  // Pairs that repeat one ratio (a simulated run): the ratio is the change.
  const Shift exact = paired_shift_of({50, 60}, {45, 54});
  CHECK(exact.exact);
  CHECK(exact.ratio == Approx(0.9));
  CHECK(exact.p == 0);
  CHECK(paired_shift_of({50, 60}, {50, 60}).p == 1);
  VerdictOptions o;
  o.paired = true;
  auto v = verdicts(one_cell(head), one_cell(base), o);
  CHECK(v[0].change == Change::kSlower);
  CHECK(v[0].fails);
  CHECK_THAT(verdict_table(v, "samples/s", o), Catch::Contains("geometric mean") && Catch::Contains("p: paired t"));
  // Unequal counts are no pairs: said, not judged.
  auto uneven = verdicts(one_cell({97, 98, 99}), one_cell({100, 101}), o);
  CHECK(uneven[0].change == Change::kUnresolved);
  CHECK_THAT(uneven[0].why, Catch::Contains("not pairs"));
}

TEST_CASE("a family of cells: Holm's step-down keeps the run's false alarms within alpha", "[regression]") {
  // Four cells: a clear loss, two 4.1% losses with p 0.043 and 0.026 alone, and one exact (a
  // cell that repeats itself: nothing to test, left out of the family).
  const std::vector<double> level{100, 101, 99, 100.5, 99.5};
  std::map<std::pair<std::string, std::string>, std::vector<double>> before{
      {{"s", "a"}, level}, {{"s", "b"}, level}, {{"s", "c"}, level}, {{"s", "e"}, level}};
  auto after = before;
  after[{"s", "a"}] = {90, 90.9, 89.1, 90.4, 89.5};
  after[{"s", "b"}] = {93.5, 100.5, 95.1, 98.9, 92.0};
  after[{"s", "c"}] = {94.0, 99.9, 95.1, 98.5, 92.4};
  const std::vector<std::pair<std::string, std::string>> order{{"s", "a"}, {"s", "b"}, {"s", "c"}, {"s", "e"}};
  const Summary ref = summarize("e", "a", "real", order, before);
  const Summary now = summarize("e", "a", "real", order, after);
  VerdictOptions o;
  o.paired = true;
  const auto alone = verdicts(now, ref, o);
  REQUIRE(alone[1].shift.p == Approx(0.04313).epsilon(0.001));
  REQUIRE(alone[2].shift.p == Approx(0.02580).epsilon(0.001));
  CHECK(alone[1].fails);
  CHECK(alone[2].fails);
  CHECK(alone[3].shift.exact);
  o.family = true;
  const auto family = verdicts(now, ref, o);
  CHECK(family[0].fails);  // the clear loss still fails
  // Three cells tested (the exact one left out): the smallest p times 3, the next times 2, the
  // last times 1 but never below the one before (Bonferroni would give 0.129 and 0.077).
  CHECK(family[0].shift.p == Approx(3 * alone[0].shift.p));
  CHECK(family[2].shift.p == Approx(2 * 0.02580).epsilon(0.001));
  CHECK(family[1].shift.p == Approx(family[2].shift.p));
  CHECK_FALSE(family[1].fails);
  CHECK_FALSE(family[2].fails);
  CHECK(family[3].shift.p == 1);
  CHECK(family[3].change == Change::kSame);
  CHECK_THAT(verdict_table(family, "samples/s", o), Catch::Contains("Holm-adjusted over the cells tested"));
}

TEST_CASE("paired: rounds pooled side by side pair round by round, and a round short of a cell is no pair",
          "[regression]") {
  // Five rounds of one repetition a side, the machine 10% faster or slower from round to round,
  // the head 3% slower in each: pooled as contend ab pools them, the rounds pair.
  const std::vector<double> drift{1.0, 1.1, 0.9, 1.05, 0.95};
  std::vector<Summary> base;
  std::vector<Summary> head;
  for (std::size_t r = 0; r < drift.size(); ++r) {
    base.push_back(one_cell({100 * drift[r] * (1 + 0.002 * static_cast<double>(r % 2))}));
    head.push_back(one_cell({97 * drift[r] * (1 - 0.002 * static_cast<double>(r % 3))}));
  }
  VerdictOptions o;
  o.paired = o.family = true;
  auto v = verdicts(pooled(head), pooled(base), o);
  CHECK(v[0].change == Change::kSlower);
  CHECK(v[0].fails);
  CHECK(v[0].shift.ratio == Approx(0.97).epsilon(0.005));
  o.paired = o.family = false;
  CHECK_FALSE(verdicts(pooled(head), pooled(base), o)[0].fails);  // unpaired, the drift hides it
  o.paired = true;
  head.pop_back();
  auto short_one = verdicts(pooled(head), pooled(base), o);
  CHECK(short_one[0].change == Change::kUnresolved);
  CHECK_THAT(short_one[0].why, Catch::Contains("5 repetitions in the reference and 4 now are not pairs"));
  CHECK_FALSE(short_one[0].fails);
}

TEST_CASE("verdicts say when the repetitions cannot resolve the tolerance, and fail a missing cell", "[regression]") {
  VerdictOptions o;
  auto three = verdicts(one_cell({90, 91, 92}), one_cell({100, 101, 102}), o);
  CHECK(three[0].change == Change::kUnresolved);
  CHECK_FALSE(three[0].fails);
  CHECK_THAT(three[0].why, Catch::Contains("at least 4"));
  // Noisy enough that a 2% loss hides in it: unresolved, not "no change".
  auto wide = verdicts(one_cell(noisy(100, 0.05, 5, 13)), one_cell(noisy(100, 0.05, 5, 14)), o);
  CHECK(wide[0].change == Change::kUnresolved);
  CHECK_THAT(wide[0].why, Catch::Contains("more repetitions"));
  Summary none = one_cell({});
  none.cells.clear();
  auto missing = verdicts(none, one_cell({100, 101, 102, 103}), o);
  CHECK(missing[0].change == Change::kMissing);
  CHECK(missing[0].fails);
}

TEST_CASE("speedups are compared repetition by repetition, so a machine's drift cancels", "[regression]") {
  // The whole machine 10% slower now, each repetition's baseline with it: the speedup held.
  const Summary ref = one_cell({120, 121, 119, 120, 122}, {100, 101, 99, 100, 102});
  const Summary now = one_cell({108, 108.9, 107.1, 108, 109.8}, {90, 90.9, 89.1, 90, 91.8});
  VerdictOptions o;
  o.quantity = Quantity::kSpeedup;
  const auto v = verdicts(now, ref, o);
  REQUIRE(v.size() == 2);
  CHECK_FALSE(v[1].fails);
  CHECK(v[1].shift.ratio == Approx(1));
  CHECK(values_of(now, now.cells[1], Quantity::kSpeedup)[0] == Approx(1.2));
  o.quantity = Quantity::kThroughput;
  CHECK(verdicts(now, ref, o)[1].fails);  // by throughput, the machine's loss is a loss
}

TEST_CASE("several reference runs pool their repetitions, each beside its own baseline", "[regression]") {
  const Summary a = one_cell({120, 121, 119}, {100, 101, 99});
  const Summary b = one_cell({108, 109, 107}, {90, 91, 89});  // a slower run of the same machine
  const Summary both = pooled({a, b});
  REQUIRE(both.cells.size() == 2);
  CHECK(both.cells[1].throughput.size() == 6);
  CHECK(both.cells[1].stats.n == 6);
  // Speedups still pair repetition by repetition: every one is 1.2.
  for (double v : values_of(both, both.cells[1], Quantity::kSpeedup)) {
    CHECK(v == Approx(1.2).epsilon(0.01));
  }
  // Now at the slower run's level: against `a` alone a loss, against both a draw of their spread.
  const Summary now = one_cell({108, 108.5, 107.5, 108.2, 107.8}, {90, 90.5, 89.5, 90.2, 89.8});
  VerdictOptions o;
  CHECK(verdicts(now, a, o)[1].fails);
  CHECK_FALSE(verdicts(now, both, o)[1].fails);
}

TEST_CASE("several reference runs further apart than the tolerance allow a loss within their drift", "[regression]") {
  // Three unchanged runs (of three machines) whose speedups lie 1.16, 1.17 and 1.25. A further
  // run's median lies, at 95%, no lower than t s sqrt(1 + 1/3) below their mean: 0.948, 19.0%
  // below their pool's middle (1.17). A run at 1.10 is 6% below that middle and 5% below the
  // lowest run: within their drift.
  const Summary a = one_cell({116, 115, 117, 116, 116.5}, {100, 100, 100, 100, 100});
  const Summary b = one_cell({117, 116.5, 117.5, 117, 116.8}, {100, 100, 100, 100, 100});
  const Summary c = one_cell({125, 124, 126, 125, 125.5}, {100, 100, 100, 100, 100});
  const Summary now = one_cell({110, 109.5, 110.5, 110.2, 109.8}, {100, 100, 100, 100, 100});
  const Stats medians = stats_of({1.16, 1.17, 1.25});
  const double drift_abc = 1 - (medians.mean - 4.303 * medians.stdev * std::sqrt(1 + 1.0 / 3)) / 1.17;
  VerdictOptions o;
  o.tolerance = 0.03;
  o.quantity = Quantity::kSpeedup;
  const auto drift = verdicts(now, std::vector<Summary>{a, b, c}, o);
  REQUIRE(drift.size() == 2);
  CHECK(drift[1].drift == Approx(drift_abc).epsilon(0.01));
  CHECK(drift[1].drift == Approx(0.190).epsilon(0.01));
  CHECK(drift[1].change == Change::kSlower);
  CHECK_FALSE(drift[1].fails);
  CHECK_THAT(drift[1].why, Catch::Contains("within the 19.0% the reference runs' own drift allows") &&
                               Catch::Contains("wider than the 3.0% tolerance"));
  // Against the pooled summary alone, the same run fails: 6% below the pool's middle, 1.17.
  CHECK(verdicts(now, pooled({a, b, c}), o)[1].fails);
  // A loss beyond the drift still fails: 0.90 is 23% below the pool's middle.
  const Summary lost = one_cell({90, 89.5, 90.5, 90.2, 89.8}, {100, 100, 100, 100, 100});
  CHECK(verdicts(lost, std::vector<Summary>{a, b, c}, o)[1].fails);
  // Runs that agree (1.16, 1.17, 1.165: a drift of 2.1%) leave the tolerance as it was.
  const Summary b2 = one_cell({116.5, 116, 117, 116.5, 116.3}, {100, 100, 100, 100, 100});
  const auto close = verdicts(now, std::vector<Summary>{a, b, b2}, o);
  CHECK(close[1].drift < 0.03);
  CHECK(close[1].fails);
  CHECK_THAT(close[1].why, Catch::Contains("beyond the 3.0% tolerance"));
  // One run, or two (t 12.7: nearly any loss would pass): the tolerance stands.
  CHECK(verdicts(now, std::vector<Summary>{c}, o)[1].drift == 0);
  CHECK(verdicts(now, std::vector<Summary>{a, c}, o)[1].drift == 0);
  // By throughput (one machine's last runs) the tolerance stays whatever the runs' drift.
  o.quantity = Quantity::kThroughput;
  const auto same_machine = verdicts(now, std::vector<Summary>{a, b, c}, o);
  CHECK(same_machine[1].drift == 0);
  CHECK(same_machine[1].fails);
  // A run that measured nothing in a cell, or lacks it, gives that cell no median, whichever order
  // the runs come in: the three others' drift stands, and two alone give none.
  o.quantity = Quantity::kSpeedup;
  const Summary zero = one_cell({0, 0, 0, 0, 0}, {100, 100, 100, 100, 100});
  Summary without = a;
  without.cells.pop_back();
  for (const auto& runs : {std::vector<Summary>{zero, a, b, c}, std::vector<Summary>{a, b, c, zero},
                           std::vector<Summary>{without, a, b, c}, std::vector<Summary>{a, b, c, without}}) {
    CHECK(verdicts(now, runs, o)[1].drift > 0.1);
  }
  CHECK(verdicts(now, std::vector<Summary>{zero, a, c}, o)[1].drift == 0);
  CHECK(verdicts(now, std::vector<Summary>{}, o).empty());
}
