// The player's sampling period: the configured one while rounds are cheap, a whole multiple of it
// that keeps sampling within a tenth of a CPU when they are not, judged on the cheapest of the
// last three rounds.
#include "sample_pacer.h"

#include <catch2/catch.hpp>

using namespace contend::emulator;

TEST_CASE("the sampling period grows with what a round costs, not with one slow round", "[player]") {
  SamplePacer pacer(0.1);
  CHECK(pacer.after(0.002) == Approx(0.1));
  CHECK(pacer.after(0.2) == Approx(0.1));  // one slow round (a busy machine): the cheapest of three counts
  CHECK(pacer.after(0.2) == Approx(0.1));
  CHECK(pacer.after(0.031) == Approx(0.4));  // rounds of 31 ms and more: 0.31 s at a tenth, whole periods
  CHECK(pacer.cost_s() == Approx(0.031));
  CHECK(pacer.after(0.001) == Approx(0.1));  // cheap again at once
  CHECK(pacer.period_s() == Approx(0.1));
}

TEST_CASE("a round that costs exactly a tenth of the period keeps the period", "[player]") {
  SamplePacer pacer(0.5);
  CHECK(pacer.after(0.05) == Approx(0.5));
  CHECK(pacer.after(0.05) == Approx(0.5));
  CHECK(pacer.after(0.0500001) == Approx(0.5));  // the cheapest of the last three is still 0.05
}
