#include "contend/emulator/scenario/mahimahi.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "contend/common/units.h"

namespace contend::emulator {

namespace {

// Opportunities per bin, counted as the lines go by: the timestamps themselves are not kept, and
// the bins are bounded (kMaxTracePoints), so a file of any length stays small.
struct Opportunities {
  std::vector<double> per_bin;
  long long last_ms = -1;
};

Result<Opportunities> count_opportunities(std::string_view text, const std::string& source, double bin_s) {
  std::vector<double> count;
  long long last = -1;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    long long ms = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), ms);
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    // Where and what was expected, never what is there: the file may not be a trace at all.
    if (ec != std::errc() || ptr != line.data() + line.size() || ms < 0) {
      const auto column = ec != std::errc() || ms < 0 ? 1 : ptr - line.data() + 1;
      return make_error(Errc::kParse,
                        source + ":" + std::to_string(line_no) + ":" + std::to_string(column) +
                            ": expected a whole number of milliseconds (a line per delivery opportunity)");
    }
    if (ms < last) {
      return make_error(Errc::kParse, where + "timestamps must not decrease, got " + std::to_string(ms) + " after " +
                                          std::to_string(last));
    }
    last = ms;
    const double bin = std::floor(static_cast<double>(ms) * 1e-3 / bin_s);
    if (bin >= static_cast<double>(kMaxTracePoints)) {
      return make_error(Errc::kParse, where + "at " + std::to_string(ms) + " ms the trace spans more than " +
                                          std::to_string(kMaxTracePoints) + " bins of " + format_seconds(bin_s) +
                                          ", the most a trace may hold; use a larger \"bin\"");
    }
    if (static_cast<std::size_t>(bin) >= count.size()) {
      count.resize(static_cast<std::size_t>(bin) + 1, 0.0);
    }
    count[static_cast<std::size_t>(bin)] += 1;
  }
  return Opportunities{std::move(count), last};
}

}  // namespace

Result<MahimahiTrace> parse_mahimahi(std::string_view text, const std::string& source, double bin_s) {
  CONTEND_CHECK(bin_s > 0, "Mahimahi bin must be positive");
  auto counted = count_opportunities(text, source, bin_s);
  if (!counted) {
    return counted.error();
  }
  std::vector<double>& count = counted->per_bin;
  const long long last = counted->last_ms;
  if (last <= 0) {
    return make_error(Errc::kParse, source + ": a Mahimahi trace needs delivery opportunities after time 0");
  }
  const double period = std::ceil(static_cast<double>(last) * 1e-3 / bin_s - 1e-9) * bin_s;
  const auto bins = static_cast<std::size_t>(std::llround(period / bin_s));
  // An opportunity exactly at the end of the last bin belongs to it.
  for (std::size_t b = bins; b < count.size(); ++b) {
    count[bins - 1] += count[b];
  }
  count.resize(bins, 0.0);
  std::vector<RateTrace::Point> points;
  for (std::size_t b = 0; b < bins; ++b) {
    const double rate = count[b] * 1500.0 * 8.0 / bin_s;
    if (points.empty() || points.back().rate_bps != rate) {
      points.push_back({static_cast<double>(b) * bin_s, rate});
    }
  }
  auto trace = RateTrace::from_points(std::move(points));
  if (!trace) {
    return with_context(trace.error(), source);
  }
  return MahimahiTrace{std::move(*trace), period};
}

}  // namespace contend::emulator
