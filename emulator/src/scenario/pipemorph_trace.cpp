#include "contend/emulator/scenario/pipemorph_trace.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "contend/common/rate_trace.h"
#include "contend/common/stall_schedule.h"

namespace contend::emulator {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool whole(std::string_view s, int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && out >= 0;
}

// "0_1,5_6" -> {(0, 1), (5, 6)}; false when a part is not two stage indices.
bool parse_links(std::string_view text, std::vector<std::pair<int, int>>& out) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view part = trimmed(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t bar = part.find('_');
    int a = 0;
    int b = 0;
    if (bar == std::string_view::npos || !whole(part.substr(0, bar), a) || !whole(part.substr(bar + 1), b) || a == b) {
      return false;
    }
    out.emplace_back(a, b);
  }
  return !out.empty();
}

Result<PipeMorphChange> parse_line(std::string_view line, const std::string& where) {
  const std::size_t first = line.find(';');
  const std::size_t second = first == std::string_view::npos ? first : line.find(';', first + 1);
  if (second == std::string_view::npos || line.find(';', second + 1) != std::string_view::npos) {
    return make_error(Errc::kParse, where + "expected ITERATION;LINKS;DELAY_S (three fields separated by ';')");
  }
  PipeMorphChange c;
  if (!whole(trimmed(line.substr(0, first)), c.iteration)) {
    return make_error(Errc::kParse, where + "expected an iteration (a whole number >= 0) in the first field");
  }
  const std::string_view delay = trimmed(line.substr(second + 1));
  if (delay == "inf") {
    return make_error(Errc::kParse, where +
                                        "a NIC crash (inf) is a lost link, not a stall contend emulates; end "
                                        "the trace before it");
  }
  const std::string text(delay);
  char* end = nullptr;
  c.delay_s = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(c.delay_s >= 0 && c.delay_s <= kMaxStallS)) {
    return make_error(Errc::kParse, where + "expected a delay in seconds, 0 to " + std::to_string(kMaxStallS) +
                                        ", in the third field");
  }
  if (!parse_links(line.substr(first + 1, second - first - 1), c.links)) {
    return make_error(Errc::kParse, where + "expected links as stage pairs i_j separated by ',' in the second field");
  }
  return c;
}

}  // namespace

Result<std::vector<PipeMorphChange>> parse_pipemorph_trace(std::string_view text, const std::string& source) {
  std::vector<PipeMorphChange> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') {
      continue;
    }
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (out.size() == kMaxTracePoints) {
      return make_error(Errc::kParse, where + "more than " + std::to_string(kMaxTracePoints) + " lines");
    }
    auto change = parse_line(line, where);
    if (!change) {
      return change.error();
    }
    if (!out.empty() && change->iteration < out.back().iteration) {
      return make_error(Errc::kParse, where + "iterations must not decrease");
    }
    out.push_back(std::move(*change));
  }
  if (out.empty()) {
    return make_error(Errc::kParse, source + ": no ITERATION;LINKS;DELAY_S lines");
  }
  return out;
}

}  // namespace contend::emulator
