#include <catch2/catch.hpp>

#include "contend/common/cpu_times.h"

using namespace contend;

namespace {
// A 2-CPU virtual machine's /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice.
const char* kStat =
    "cpu  1966466 24613 417486 2337407 6988 0 26614 58788 0 0\n"
    "cpu0 983233 12306 208743 1168703 3494 0 13307 29394 0 0\n"
    "intr 1234\n";
}  // namespace

TEST_CASE("the machine's CPU time: steal and the total up to it, guest time not counted twice", "[unit][cpu_times]") {
  auto t = parse_cpu_times(kStat);
  REQUIRE(t.ok());
  CHECK(t->steal == 58788);
  CHECK(t->total == 1966466u + 24613 + 417486 + 2337407 + 6988 + 0 + 26614 + 58788);
  CHECK(t->busy == 1966466u + 24613 + 417486);
}

TEST_CASE("the share other processes took: the machine's busy time less this process tree's", "[unit][cpu_times]") {
  // 2 CPUs, 10 s at 100 ticks a second: 2000 ticks; 900 busy, of which 3 s (300 ticks) ours.
  const CpuTimes before{0, 1000, 500};
  const CpuTimes after{0, 3000, 1400};
  CHECK(others_share(before, after, 3.0, 100) == Approx(0.3));
  CHECK(others_share(before, after, 9.5, 100) == 0);  // ours counted past the machine's: none
  CHECK(others_share(before, before, 0, 100) == 0);   // no time passed
  // This process, spinning 50 ms: counted as its own.
  const double start = own_cpu_seconds();
  volatile double x = 0;
  while (own_cpu_seconds() - start < 0.05) {
    x = x + 1;
  }
  CHECK(own_cpu_seconds() - start >= 0.05);
}

TEST_CASE("the share the hypervisor took between two readings", "[unit][cpu_times]") {
  const CpuTimes before{100, 1000};
  CHECK(steal_share(before, CpuTimes{130, 1400}) == Approx(0.075));
  CHECK(steal_share(before, before) == 0);              // no time passed
  CHECK(steal_share(before, CpuTimes{90, 1400}) == 0);  // counters went back (a restored machine)
}

TEST_CASE("a /proc/stat that is not one is refused, saying what is wrong", "[unit][cpu_times]") {
  auto no_total = parse_cpu_times("cpu0 1 2 3 4 5 6 7 8\n");
  REQUIRE_FALSE(no_total.ok());
  CHECK_THAT(no_total.error().message, Catch::Contains("\"cpu\" total"));
  auto short_line = parse_cpu_times("cpu  1 2 3 4 5 6 7\n");
  REQUIRE_FALSE(short_line.ok());
  CHECK_THAT(short_line.error().message, Catch::Contains("fewer than the 8 up to steal"));
  auto not_ticks = parse_cpu_times("cpu  1 2 3 4x 5 6 7 8\n");
  REQUIRE_FALSE(not_ticks.ok());
  CHECK_THAT(not_ticks.error().message, Catch::Contains("counter 4"));
  auto too_many = parse_cpu_times("cpu  18446744073709551615 1 1 1 1 1 1 1\n");
  REQUIRE_FALSE(too_many.ok());
  CHECK_THAT(too_many.error().message, Catch::Contains("overflow"));
}

TEST_CASE("this machine's CPU time is readable, and a missing file names its path", "[unit][cpu_times]") {
  auto here = read_cpu_times();
  REQUIRE(here.ok());
  CHECK(here->total > here->steal);
  auto missing = read_cpu_times("/nonexistent/stat");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("/nonexistent/stat"));
}
