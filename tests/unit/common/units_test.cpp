#include <catch2/catch.hpp>

#include "contend/common/units.h"

using namespace contend;
using namespace std::chrono_literals;

TEST_CASE("rates parse to bits per second with decimal prefixes", "[units]") {
  CHECK(*parse_rate_bps("10Gbit") == Approx(10e9));
  CHECK(*parse_rate_bps("500Mbit") == Approx(500e6));
  CHECK(*parse_rate_bps("1.5Gbps") == Approx(1.5e9));
  CHECK(*parse_rate_bps("100kbit") == Approx(100e3));
  CHECK(*parse_rate_bps("64bit") == Approx(64));
  CHECK(*parse_rate_bps("2mbit") == Approx(2e6));
  CHECK(*parse_rate_bps("250Mbit/s") == Approx(250e6));
  CHECK(*parse_rate_bps("1e3Mbit") == Approx(1e9));
  CHECK(*parse_rate_bps("0bit") == 0.0);
}

TEST_CASE("bad rates are errors that quote the input and say what was expected", "[units]") {
  for (const char* bad :
       {"", "fast", "100", "100 Mbit", "-5Mbit", "10Gbitx", "10GB", "nanbit", "1.2.3Mbit", "Mbit", "10Xbit"}) {
    INFO(bad);
    auto r = parse_rate_bps(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::kInvalidArgument);
    CHECK_THAT(r.error().message, Catch::Contains("expected a rate like \"500Mbit\""));
    CHECK_THAT(r.error().message, Catch::Contains(std::string("got \"") + bad + "\""));
  }
}

TEST_CASE("sizes parse binary and decimal units and bare bytes", "[units]") {
  CHECK(*parse_size_bytes("4MiB") == 4u * 1024 * 1024);
  CHECK(*parse_size_bytes("1GB") == 1000000000u);
  CHECK(*parse_size_bytes("512B") == 512u);
  CHECK(*parse_size_bytes("512") == 512u);
  CHECK(*parse_size_bytes("64KiB") == 65536u);
  CHECK(*parse_size_bytes("1.5KiB") == 1536u);
  CHECK(*parse_size_bytes("2kB") == 2000u);
  CHECK(*parse_size_bytes("1TiB") == 1099511627776u);
}

TEST_CASE("bad sizes are rejected with the reason", "[units]") {
  for (const char* bad : {"", "big", "1.5B", "1.5", "4mib", "4 MiB", "-1B", "4MiBs", "1e30TB"}) {
    INFO(bad);
    auto r = parse_size_bytes(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("expected a size like \"4MiB\""));
  }
  CHECK_THAT(parse_size_bytes("1.5B").error().message, Catch::Contains("whole number of bytes"));
}

TEST_CASE("durations need a unit and parse to nanoseconds", "[units]") {
  CHECK(*parse_duration("250us") == 250us);
  CHECK(*parse_duration("1.5ms") == 1500us);
  CHECK(*parse_duration("2s") == 2s);
  CHECK(*parse_duration("1min") == 60s);
  CHECK(*parse_duration("100ns") == 100ns);
  CHECK(*parse_duration("1h") == 3600s);
  CHECK(*parse_duration("0s") == 0ns);
  for (const char* bad : {"", "250", "soon", "1.5 ms", "-1s", "2sec", "1m", "1e300h"}) {
    INFO(bad);
    auto r = parse_duration(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("expected a duration like \"250ms\""));
  }
  CHECK_THAT(parse_duration("250").error().message, Catch::Contains("missing unit"));
}

TEST_CASE("formatting prints three significant digits with the largest fitting unit", "[units]") {
  CHECK(format_rate(1.5e9) == "1.5Gbit");
  CHECK(format_rate(500e6) == "500Mbit");
  CHECK(format_size(4u << 20) == "4MiB");
  CHECK(format_size(100) == "100B");
  CHECK(format_duration(250us) == "250us");
  CHECK(format_seconds(1.5) == "1.5s");
  CHECK(format_seconds(0.0123) == "12.3ms");
}

TEST_CASE("formatted values parse back to themselves", "[units]") {
  for (double bps : {1e3, 2.5e6, 10e9}) {
    CHECK(*parse_rate_bps(format_rate(bps)) == Approx(bps));
  }
  for (std::uint64_t bytes : {512ull, 65536ull, 4ull << 20, 3ull << 30}) {
    CHECK(*parse_size_bytes(format_size(bytes)) == bytes);
  }
}
