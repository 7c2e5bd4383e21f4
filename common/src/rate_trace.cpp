#include "contend/common/rate_trace.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>

#include "contend/common/units.h"

namespace contend {

RateTrace RateTrace::constant(double rate_bps) {
  CONTEND_CHECK(rate_bps >= 0, "negative rate");
  return RateTrace({Point{0.0, rate_bps}});
}

Result<RateTrace> RateTrace::from_points(std::vector<Point> points) {
  if (points.empty()) {
    return make_error(Errc::kInvalidArgument, "a rate trace needs at least one point");
  }
  if (points.front().time_s != 0.0) {
    return make_error(Errc::kInvalidArgument,
                      "a rate trace must start at time 0, got " + format_seconds(points.front().time_s));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].rate_bps >= 0)) {
      return make_error(Errc::kInvalidArgument, "point " + std::to_string(i) + ": negative rate");
    }
    if (i > 0 && !(points[i].time_s > points[i - 1].time_s)) {
      return make_error(Errc::kInvalidArgument, "point " + std::to_string(i) + ": times must increase strictly, got " +
                                                    format_seconds(points[i].time_s) + " after " +
                                                    format_seconds(points[i - 1].time_s));
    }
  }
  return RateTrace(std::move(points));
}

bool RateTrace::is_unlimited() const {
  return points_.size() == 1 && std::isinf(points_.front().rate_bps);
}

double RateTrace::rate_at(double time_s) const {
  auto it =
      std::upper_bound(points_.begin(), points_.end(), time_s, [](double t, const Point& p) { return t < p.time_s; });
  if (it == points_.begin()) {
    return points_.front().rate_bps;
  }
  return std::prev(it)->rate_bps;
}

RateTrace RateTrace::from(double start_s) const {
  std::vector<Point> out{{0.0, rate_at(start_s)}};
  for (const Point& p : points_) {
    if (p.time_s > start_s) {
      out.push_back({p.time_s - start_s, p.rate_bps});
    }
  }
  return RateTrace(std::move(out));
}

RateTrace RateTrace::map(const std::function<double(double)>& f) const {
  std::vector<Point> out;
  for (const Point& p : points_) {
    const double value = f(p.rate_bps);
    CONTEND_CHECK(value >= 0, "RateTrace::map: a negative value");
    out.push_back({p.time_s, value});
  }
  return RateTrace(std::move(out));
}

double RateTrace::finish_time(double start_s, double bits) const {
  if (bits <= 0) {
    return start_s;
  }
  // Segment containing start_s.
  size_t i = static_cast<size_t>(
      std::upper_bound(points_.begin(), points_.end(), start_s, [](double t, const Point& p) { return t < p.time_s; }) -
      points_.begin());
  i = i == 0 ? 0 : i - 1;
  double t = start_s;
  double left = bits;
  for (; i < points_.size(); ++i) {
    const double rate = points_[i].rate_bps;
    const double end = i + 1 < points_.size() ? points_[i + 1].time_s : std::numeric_limits<double>::infinity();
    if (rate > 0) {
      const double needed = left / rate;
      if (t + needed <= end) {
        return t + needed;
      }
      left -= rate * (end - t);
    }
    t = end;
  }
  return std::numeric_limits<double>::infinity();
}

double RateTrace::bits_between(double from_s, double to_s) const {
  if (!(to_s > from_s)) {
    return 0;
  }
  double bits = 0;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const double start = std::max(from_s, points_[i].time_s);
    const double end = std::min(to_s, i + 1 < points_.size() ? points_[i + 1].time_s : to_s);
    if (end > start && points_[i].rate_bps > 0) {
      bits += points_[i].rate_bps * (end - start);
    }
  }
  return bits;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// `s` as a finite non-negative number when it is one whole; nullopt otherwise (no error built: a
// trace tries it on every line before a unit).
std::optional<double> plain_number(std::string_view s) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) {
    return std::nullopt;
  }
  return v;
}

// What the second column of a timed CSV holds: its header name, how a value parses, and what a
// value looks like (for errors).
struct ValueColumn {
  const char* header;  // "rate", "stall"
  Result<double> (*parse)(std::string_view text);
  const char* expected;
};

Result<double> rate_value(std::string_view text) {
  if (auto plain = plain_number(text)) {
    return *plain;
  }
  return parse_rate_bps(text);
}

Result<double> stall_value(std::string_view text) {
  if (auto plain = plain_number(text)) {
    return *plain;
  }
  auto d = parse_duration(text);
  if (!d) {
    return d.error();
  }
  return std::chrono::duration<double>(*d).count();
}

const ValueColumn kRate{"rate", rate_value,
                        "a rate in the second column: bits per second, or a number with a unit like \"500Mbit\""};
const ValueColumn kStall{"stall", stall_value, "a stall in the second column: seconds, or a duration like \"30ms\""};

// One "time_s,VALUE" line (trimmed); `at(part)` says where a part of it is.
template <typename At>
Result<RateTrace::Point> parse_point(std::string_view line, const ValueColumn& column, const At& at) {
  const auto columns = [&column] { return std::string("\"time_s,") + column.header + "\""; };
  const size_t comma = line.find(',');
  if (comma == std::string_view::npos) {
    return make_error(Errc::kParse, at(line.substr(line.size())) + "expected two columns " + columns() +
                                        ": a comma and a value after the time");
  }
  if (const size_t extra = line.find(',', comma + 1); extra != std::string_view::npos) {
    return make_error(Errc::kParse, at(line.substr(extra)) + "expected two columns " + columns() + ", found a third");
  }
  const std::optional<double> time = plain_number(trim(line.substr(0, comma)));
  if (!time) {
    return make_error(Errc::kParse,
                      at(line) + "expected a time in seconds (a non-negative number) in the first column");
  }
  auto value = column.parse(trim(line.substr(comma + 1)));
  if (!value) {
    return make_error(Errc::kParse, at(line.substr(comma + 1)) + "expected " + column.expected);
  }
  return RateTrace::Point{*time, *value};
}

Result<RateTrace> parse_timed_csv(std::string_view text, const std::string& source, const ValueColumn& column) {
  std::vector<RateTrace::Point> points;
  size_t line_no = 0;
  const std::string header = std::string("time_s,") + column.header;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    const std::string_view line = trim(raw);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    // Errors say where and what was expected, never what is there: the file may not be a trace
    // at all (a scenario naming /etc/shadow must not print a line of it).
    const auto at = [&](std::string_view part) {
      return source + ":" + std::to_string(line_no) + ":" + std::to_string(part.data() - raw.data() + 1) + ": ";
    };
    if (line.empty() || line.front() == '#' || (points.empty() && line == header)) {
      continue;
    }
    auto point = parse_point(line, column, at);
    if (!point) {
      return point.error();
    }
    if (points.size() == kMaxTracePoints) {
      return make_error(Errc::kParse, at(line) + "more than " + std::to_string(kMaxTracePoints) +
                                          " points, the most a trace may hold");
    }
    if (!points.empty() && !(point->time_s > points.back().time_s)) {
      return make_error(Errc::kParse, at(line) + "time_s must increase, got " + format_seconds(point->time_s) +
                                          " after " + format_seconds(points.back().time_s));
    }
    points.push_back(*point);
  }
  if (points.empty()) {
    return make_error(Errc::kParse, source + ": no \"" + header + "\" lines");
  }
  if (points.front().time_s != 0) {
    return make_error(Errc::kParse, source + ": the first line must be at time_s 0 (the value before it is unknown)");
  }
  auto trace = RateTrace::from_points(std::move(points));
  if (!trace) {
    return make_error(Errc::kParse, source + ": " + trace.error().message);
  }
  return trace;
}

}  // namespace

Result<RateTrace> parse_rate_trace_csv(std::string_view text, const std::string& source) {
  return parse_timed_csv(text, source, kRate);
}

Result<RateTrace> parse_stall_trace_csv(std::string_view text, const std::string& source) {
  return parse_timed_csv(text, source, kStall);
}

}  // namespace contend
