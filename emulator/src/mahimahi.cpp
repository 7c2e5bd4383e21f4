#include "contend/emulator/mahimahi.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace contend::emulator {

Result<MahimahiTrace> parse_mahimahi(std::string_view text, const std::string& source, double bin_s) {
  CONTEND_CHECK(bin_s > 0, "Mahimahi bin must be positive");
  std::vector<long long> stamps;
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
    if (ec != std::errc() || ptr != line.data() + line.size() || ms < 0) {
      return make_error(Errc::kParse,
                        where + "expected a whole number of milliseconds, got \"" + std::string(line) + "\"");
    }
    if (!stamps.empty() && ms < stamps.back()) {
      return make_error(Errc::kParse, where + "timestamps must not decrease, got " + std::to_string(ms) + " after " +
                                          std::to_string(stamps.back()));
    }
    stamps.push_back(ms);
  }
  if (stamps.empty() || stamps.back() == 0) {
    return make_error(Errc::kParse, source + ": a Mahimahi trace needs delivery opportunities after time 0");
  }
  const double period = std::ceil(static_cast<double>(stamps.back()) * 1e-3 / bin_s - 1e-9) * bin_s;
  const auto bins = static_cast<std::size_t>(std::llround(period / bin_s));
  std::vector<double> count(bins, 0);
  for (long long ms : stamps) {
    // Mahimahi's opportunity at time t falls in the bin containing t; the last one at the end.
    auto b = static_cast<std::size_t>(static_cast<double>(ms) * 1e-3 / bin_s);
    count[std::min(b, bins - 1)] += 1;
  }
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
