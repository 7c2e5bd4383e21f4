#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "contend/common/rate_trace.h"

using namespace contend;

TEST_CASE("finish_time integrates a piecewise-constant rate", "[trace]") {
  auto t = RateTrace::from_points({{0, 8e6}, {0.5, 4e6}, {2.0, 0}, {3.0, 8e6}});
  REQUIRE(t.ok());
  CHECK(t->finish_time(0, 4e6) == Approx(0.5));
  // 4 Mbit in the first half second, the other 4 Mbit at 4 Mbit/s.
  CHECK(t->finish_time(0, 8e6) == Approx(1.5));
  // 2 Mbit by the pause at 2 s, nothing until 3 s, the other 2 Mbit at 8 Mbit/s.
  CHECK(t->finish_time(1.5, 4e6) == Approx(3.25));
  CHECK(t->rate_at(2.5) == 0);
  CHECK(t->rate_at(10) == 8e6);
  CHECK(t->finish_time(1.0, 0) == 1.0);
  CHECK(t->bits_between(0, 1) == Approx(4e6 + 2e6));
  CHECK(t->bits_between(1.5, 4) == Approx(2e6 + 8e6));
  CHECK(t->bits_between(2, 1) == 0);
}

TEST_CASE("a trace that ends at rate 0 never delivers what is left", "[trace]") {
  auto t = RateTrace::from_points({{0, 1e6}, {1, 0}});
  REQUIRE(t.ok());
  CHECK(std::isinf(t->finish_time(0, 2e6)));
  CHECK(RateTrace::unlimited().finish_time(3, 1e12) == 3);
}

TEST_CASE("a mapped trace changes at the same times", "[trace]") {
  auto t = RateTrace::from_points({{0, 1e9}, {2, 1e8}});
  REQUIRE(t.ok());
  const RateTrace depth = t->map([](double bps) { return bps / 250; });
  CHECK(depth.rate_at(1) == Approx(4e6));
  CHECK(depth.rate_at(2) == Approx(4e5));
  CHECK(depth.points().size() == 2);
}

TEST_CASE("only a trace of one point at no limit is unlimited", "[trace]") {
  CHECK(RateTrace::unlimited().is_unlimited());
  CHECK_FALSE(RateTrace::constant(1e9).is_unlimited());
  auto later = RateTrace::from_points({{0, 1e6}, {1, std::numeric_limits<double>::infinity()}});
  REQUIRE(later.ok());
  CHECK_FALSE(later->is_unlimited());  // limited until t = 1
}

TEST_CASE("trace CSV accepts units, bare bits per second, a header and comments", "[trace]") {
  auto t = parse_rate_trace_csv("time_s,rate\n# step down\n0,1Gbit\n\n2.5,250Mbit\r\n4,1000000\n", "t.csv");
  REQUIRE(t.ok());
  REQUIRE(t->points().size() == 3);
  CHECK(t->points()[1].time_s == 2.5);
  CHECK(t->points()[1].rate_bps == Approx(250e6));
  CHECK(t->points()[2].rate_bps == Approx(1e6));
}

TEST_CASE("trace CSV errors name the file, line and column and what was expected, never the content", "[trace]") {
  const auto err = [](const char* text) { return parse_rate_trace_csv(text, "t.csv").error().message; };
  CHECK_THAT(err("0,1Gbit\n1,fast\n"),
             Catch::StartsWith("t.csv:2:3: expected a rate in the second column") && !Catch::Contains("fast"));
  CHECK_THAT(err("0,1Gbit\n1\n"), Catch::StartsWith("t.csv:2:2: expected two columns"));
  CHECK_THAT(err("0,1Gbit\n1,2,3\n"),
             Catch::StartsWith("t.csv:2:4: expected two columns \"time_s,rate\", found a third"));
  CHECK_THAT(err("0,1Gbit\n2,1Gbit\n1,1Gbit\n"), Catch::StartsWith("t.csv:3:1: time_s must increase, got 1s after 2s"));
  CHECK_THAT(err("1,1Gbit\n"), Catch::Contains("first line must be at time_s 0"));
  CHECK_THAT(err("# nothing\n"), Catch::Contains("no \"time_s,rate\" lines"));
  CHECK_THAT(err("  x,1Gbit\n"), Catch::StartsWith("t.csv:1:3: expected a time in seconds"));
  // A file that is not a trace (a scenario naming /etc/shadow): no byte of it in the message.
  const std::string secret = "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n";
  const std::string message = parse_rate_trace_csv(secret, "/etc/shadow").error().message;
  CHECK_THAT(message, Catch::StartsWith("/etc/shadow:1:"));
  for (const char* part : {"root", "SECRETHASH", "19000", "daemon"}) {
    CHECK_THAT(message, !Catch::Contains(part));
  }
}
