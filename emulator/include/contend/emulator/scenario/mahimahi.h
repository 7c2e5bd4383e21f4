#pragma once
// Mahimahi's delivery-opportunity trace format: one line per opportunity to deliver one
// 1500-byte packet, the line being the time in milliseconds since the trace start (non-
// decreasing). The trace repeats after its last line. Converted to a piecewise-constant rate by
// counting opportunities per bin. Pure; thread-safe.

#include <string>
#include <string_view>

#include "contend/common/rate_trace.h"
#include "contend/common/result.h"

namespace contend::emulator {

struct MahimahiTrace {
  RateTrace rate;       // rate over [0, period_s), one point per bin whose rate changes
  double period_s = 0;  // the trace's length: the last timestamp rounded up to a whole bin
};

// Bins of `bin_s` seconds (at most kMaxTracePoints of them); rate of a bin = opportunities in it x
// 1500 x 8 / bin_s. Errors name `source`, the line and column, and what was expected, never quoting
// the file: "cell.trace:12:1: expected a whole number of milliseconds (...)".
Result<MahimahiTrace> parse_mahimahi(std::string_view text, const std::string& source, double bin_s);

}  // namespace contend::emulator
