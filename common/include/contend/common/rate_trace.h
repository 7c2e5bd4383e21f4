#pragma once
// RateTrace: a link rate that changes over time, piecewise constant. Shared by the simulator
// (links that follow a trace) and the emulator (scenarios replaying a trace).
// Immutable after construction; safe to share between threads.

#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "contend/common/result.h"

namespace contend {

class RateTrace {
 public:
  struct Point {
    double time_s = 0;    // the rate holds from this time...
    double rate_bps = 0;  // ...until the next point; the last point's rate holds forever
  };

  // A constant rate; +infinity means "no bandwidth limit".
  static RateTrace constant(double rate_bps);
  // No bandwidth limit: constant(+infinity).
  static RateTrace unlimited() { return constant(std::numeric_limits<double>::infinity()); }
  // Requires: non-empty, first time 0, times strictly increasing, rates >= 0. Returns
  // kInvalidArgument naming the offending point otherwise.
  static Result<RateTrace> from_points(std::vector<Point> points);

  const std::vector<Point>& points() const { return points_; }
  // True for a trace that never limits: one point at +infinity, as unlimited() makes.
  bool is_unlimited() const;
  double rate_at(double time_s) const;
  // The time at which `bits` sent from `start_s` have crossed the link, integrating the rate.
  // +infinity when the trace ends at rate 0 before they have.
  double finish_time(double start_s, double bits) const;
  // The bits the link can carry between `from_s` and `to_s` (the integral of the rate).
  double bits_between(double from_s, double to_s) const;
  // The same trace seen from `start_s` on: time 0 of the result is `start_s` of this one.
  RateTrace from(double start_s) const;
  // What `f` makes of each value, at the same times: what follows the rate (a shaper's bucket
  // depth). `f` must return values >= 0.
  RateTrace map(const std::function<double(double)>& f) const;

 private:
  explicit RateTrace(std::vector<Point> points) : points_(std::move(points)) {}
  std::vector<Point> points_;
};

// The most points a trace file may hold (16 MB of points): parsers refuse more while reading,
// so a file of tiny intervals never grows to gigabytes.
inline constexpr std::size_t kMaxTracePoints = 1'000'000;

// Parses a trace in CSV form (at most kMaxTracePoints points): one "time_s,rate" line per change, optional header line
// "time_s,rate", '#' comments and blank lines ignored. The rate is a rate with a unit ("50Mbit")
// or a bare number in bits per second. `source` (a file name) starts every error message, with
// the line and column, and says what was expected without quoting the file (which may not be a
// trace at all): "trace.csv:4:3: expected a rate in the second column: ...".
Result<RateTrace> parse_rate_trace_csv(std::string_view text, const std::string& source);
// The same for a stall over time ("time_s,stall", each stall in seconds or a duration like
// "30ms"), held in a RateTrace whose values are seconds.
Result<RateTrace> parse_stall_trace_csv(std::string_view text, const std::string& source);

}  // namespace contend
