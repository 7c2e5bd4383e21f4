#pragma once
// Strict parsing and printing of the units every file format and command line of contend uses.
// A value is a decimal number immediately followed by a unit; anything else (no unit where one is
// required, unknown unit, trailing text, negative, NaN, overflow) is an Error of kind
// kInvalidArgument whose message quotes the input and says what was expected. Never a silent zero.
// All functions are pure and thread-safe.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "contend/common/result.h"

namespace contend {

// Rate in bits per second. Units, case-insensitive, decimal prefixes (k = 1000):
// bit, kbit, mbit, gbit, tbit and the same with "bps" or "bit/s" ("1.5Gbps", "500Mbit/s").
// Note: unlike tc(8), "bps" here means bits per second, as in networking prose.
// "0bit" is allowed (a link that carries nothing); callers that need a positive rate check.
Result<double> parse_rate_bps(std::string_view text);

// Size in bytes. Units: B, kB/KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB (powers of 1024).
// A bare non-negative integer is bytes ("512"). Fractions must come out to whole bytes
// ("1.5KiB" is 1536; "1.5B" is an error).
Result<std::uint64_t> parse_size_bytes(std::string_view text);

// Duration. Units: ns, us, ms, s, min, h. A unit is required ("250" is an error: 250 what?).
// Fractions are rounded to the nearest nanosecond.
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);

// Human-readable forms with three significant digits: "1.5Gbit", "4MiB", "250us".
std::string format_rate(double bps);
std::string format_size(std::uint64_t bytes);
std::string format_duration(std::chrono::nanoseconds d);
std::string format_seconds(double seconds);

// Division, not multiplication by 1e-9, so whole seconds stay exact ("60s" is 60.0, not
// 60.000000000000007, which would let an event at 60 s into a 60 s scenario).
inline double to_seconds(std::chrono::nanoseconds d) {
  return static_cast<double>(d.count()) / 1e9;
}

}  // namespace contend
