#include "results/throughput.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "contend/runner/results/iteration_log.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("over a window, the samples completed inside it count, an iteration across an end in part", "[runner]") {
  Workload w;
  w.stages = 2;
  w.microbatches = 4;
  w.warmup = 1;
  w.iterations = 2;
  const double n = w.samples_per_iteration();
  // Iterations of 1 s from 10 s on the steady clock; the scenario began at 10 s.
  const std::vector<std::pair<double, double>> its{{10, 1}, {11, 1}, {12, 1}, {13, 1}};
  auto whole = iterations_throughput(its, w, MeasureWindow{0, 4}, 10, "t");
  REQUIRE(whole.ok());
  CHECK(*whole == Approx(n));
  // 1.5 s to 3.5 s: half of the second, the third, half of the fourth: 2 iterations in 2 s.
  auto part = iterations_throughput(its, w, MeasureWindow{1.5, 3.5}, 10, "t");
  REQUIRE(part.ok());
  CHECK(*part == Approx(n));
  const std::vector<std::pair<double, double>> uneven{{10, 1}, {11, 3}};
  CHECK(*iterations_throughput(uneven, w, MeasureWindow{0, 2}, 10, "t") == Approx((n + n / 3) / 2));
  // A cell that ended before the window's end is refused, not counted short.
  auto short_cell = iterations_throughput(its, w, MeasureWindow{1, 5}, 10, "t");
  REQUIRE_FALSE(short_cell.ok());
  CHECK_THAT(short_cell.error().message, Catch::Contains("measure window") && Catch::Contains("iterations"));
  // Without a window: all the iterations given, first start to last end.
  CHECK(*iterations_throughput(its, w, std::nullopt, 0, "t") == Approx(n));
}

TEST_CASE("an iteration log whose rank-0 line lacks its numbers is refused naming the line", "[runner]") {
  char name[] = "/tmp/contend-log-XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  const std::string text =
      "{\"rank\": 1, \"iteration\": 0}\n{\"rank\": 0, \"iteration\": null, \"start_s\": 1, "
      "\"iteration_s\": 1}\n";
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
  Workload w;
  w.warmup = 0;
  w.iterations = 1;
  auto log = read_iteration_log(name);
  auto tp = log ? cell_throughput(*log, w) : Result<double>(log.error());
  ::unlink(name);
  REQUIRE_FALSE(tp.ok());
  CHECK(tp.error().code == Errc::kParse);
  CHECK_THAT(tp.error().message, Catch::Contains(std::string(name) + ":2"));
}

TEST_CASE("a cell whose measured iterations ran past its scenario is refused, a stopped worker shows in its spread",
          "[runner]") {
  Workload w;
  w.warmup = 1;
  w.iterations = 3;
  // Rank 0's iterations of 1 s from the scenario's time 0 (steady clock 100), the third 20 s long.
  const TempFile metrics(R"({"rank": 0, "iteration": 0, "start_s": 100, "iteration_s": 1}
{"rank": 0, "iteration": 1, "start_s": 101, "iteration_s": 1}
{"rank": 0, "iteration": 2, "start_s": 102, "iteration_s": 20}
{"rank": 0, "iteration": 3, "start_s": 122, "iteration_s": 1}
)");
  const TempFile long_enough(R"({"kind": "start", "steady_s": 100, "duration_s": 60})"
                             "\n");
  const TempFile too_short(R"({"kind": "start", "steady_s": 100, "duration_s": 4})"
                           "\n");
  auto log = read_iteration_log(metrics.name);
  REQUIRE(log.ok());
  CHECK(cell_throughput(*log, w, std::nullopt, long_enough.name).ok());
  auto refused = cell_throughput(*log, w, std::nullopt, too_short.name);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("ran until 23s of the scenario's clock, past its duration (4s)"));
  // Measured over a window inside the scenario, what ran after it does not matter.
  CHECK(cell_throughput(*log, w, MeasureWindow{0.5, 1.5}, too_short.name).ok());
  const IterationSpread spread = iteration_spread(*log, w);
  CHECK(spread.median_s == 1);
  CHECK(spread.slowest_s == 20);
  CHECK(spread.slowest == 2);
}

TEST_CASE(
    "steps reported twice count once, lines read late are laid back, and two processes' steps, early steps or absurd "
    "amounts are refused",
    "[runner]") {
  const TempFile events(R"({"kind": "start", "steady_s": 100, "duration_s": 60})"
                        "\n");
  // Ten steps of 1 s from the scenario's time 1, 10 samples each.
  std::vector<Interval> steps;
  for (int i = 0; i < 10; ++i) {
    steps.push_back({101.0 + i, 1.0, 10.0});
  }
  auto once = measured_throughput(steps, 10, std::nullopt, events.name, "log");
  REQUIRE(once.ok());
  CHECK(*once == Approx(10.0));
  // Every step line printed twice (mpirun's merged output), read a moment apart: the same rate.
  std::vector<Interval> twice;
  for (const Interval& s : steps) {
    twice.push_back(s);
    twice.push_back({s.start_s + 0.002, s.seconds, s.amount});
  }
  auto doubled = measured_throughput(twice, 10, std::nullopt, events.name, "log");
  REQUIRE(doubled.ok());
  CHECK(*doubled == Approx(10.0));
  // Every other step's line read 3 ms late, the next on time: the next one's start falls 3 ms into
  // it, which is jitter, not work counted twice.
  std::vector<Interval> jitter = steps;
  for (std::size_t i = 0; i < jitter.size(); i += 2) {
    jitter[i].start_s += 0.003;
  }
  auto jittered = measured_throughput(jitter, 10, std::nullopt, events.name, "log");
  REQUIRE(jittered.ok());
  CHECK(*jittered == Approx(10.0).epsilon(0.01));
  // The lines of steps 3 and 4 read with step 5's (a reader that waited for the CPU): each
  // step's interval ends then, on top of the others; laid back one after another, the same rate.
  std::vector<Interval> burst = steps;
  for (std::size_t i = 3; i < 6; ++i) {
    burst[i].seconds = 1.0 - 0.0005 * static_cast<double>(i - 2);  // their own timings, a little apart
    burst[i].start_s = 107.0 + 0.0001 * static_cast<double>(i) - burst[i].seconds;
  }
  auto late = measured_throughput(burst, 10, std::nullopt, events.name, "log");
  REQUIRE(late.ok());
  CHECK(*late == Approx(10.0).epsilon(0.001));
  // Two processes' steps in one log, each rank's own timing: a second rank's step `after` each of
  // the first's ends, `seconds` long. Read as printed, a moment apart, or finishing each step
  // together (DDP's ranks) and read in one go: their work would be counted on top of each other.
  const auto two_processes = [&](double after, double seconds) {
    std::vector<Interval> two = steps;
    for (const Interval& s : steps) {
      two.push_back({s.start_s + s.seconds + after - seconds, seconds, s.amount});
    }
    return measured_throughput(two, 10, std::nullopt, events.name, "log");
  };
  for (const auto& [after, seconds] : {std::pair{0.298, 0.998}, std::pair{0.0012, 1.001}}) {
    auto refused = two_processes(after, seconds);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("two steps overlap as one process's cannot"));
  }
  // Each step's time rounded up by 4%, as a job printing 2 digits may: each starts a little into
  // the one before, and starts where it ended.
  std::vector<Interval> rounded = steps;
  for (Interval& s : rounded) {
    s.start_s -= 0.04;
    s.seconds += 0.04;
  }
  auto roundup = measured_throughput(rounded, 10, std::nullopt, events.name, "log");
  REQUIRE(roundup.ok());
  CHECK(*roundup == Approx(100.0 / 10.04).epsilon(0.001));
  // A step that began 49.9 s before the scenario: not timed on the player's clock.
  std::vector<Interval> early = steps;
  early.front().start_s = 100 - 49.9;
  early.front().seconds = 0.5;
  auto before = measured_throughput(early, 10, std::nullopt, events.name, "log");
  REQUIRE_FALSE(before.ok());
  CHECK_THAT(before.error().message, Catch::Contains("before the scenario started"));
  // A step claiming 1.5e308 samples: the sum is not a number to publish.
  std::vector<Interval> absurd = steps;
  absurd[3].amount = 1.5e308;
  absurd[4].amount = 1.5e308;
  auto huge = measured_throughput(absurd, 10, std::nullopt, events.name, "log");
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.error().message, Catch::Contains("not a finite number"));
}
