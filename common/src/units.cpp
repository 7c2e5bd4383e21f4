#include "contend/common/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace contend {
namespace {

struct Split {
  double number = 0;
  std::string_view unit;
  bool number_is_integer = false;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Error bad(std::string_view text, const char* kind, const char* example, const std::string& why) {
  return make_error(Errc::kInvalidArgument, std::string("expected ") + kind + " like \"" + example + "\", got \"" +
                                                excerpt(text) + "\"" + (why.empty() ? "" : " (" + why + ")"));
}

// Splits "1.5Gbit" into 1.5 and "Gbit". The number is plain decimal: digits, one optional point,
// optional exponent; no sign, no hex, no inf/nan, no spaces.
Result<Split> split(std::string_view text, const char* kind, const char* example) {
  size_t i = 0;
  bool digits = false;
  bool point = false;
  bool integer = true;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !point) {
      point = true;
      integer = false;
    } else {
      break;
    }
    ++i;
  }
  if (!digits) {
    return bad(text, kind, example, text.empty() ? "empty" : "no number at the start");
  }
  // An exponent only when followed by digits, so "1e3bit" parses and "1Ebit" is a unit error.
  if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E') &&
      (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' || text[i + 1] == '+')) {
    size_t j = i + 1;
    if (text[j] == '-' || text[j] == '+') {
      ++j;
    }
    if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
        ++j;
      }
      i = j;
      integer = false;
    }
  }
  Split s;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, s.number);
  if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(s.number)) {
    return bad(text, kind, example, "number out of range");
  }
  s.unit = text.substr(i);
  s.number_is_integer = integer;
  return s;
}

}  // namespace

Result<double> parse_rate_bps(std::string_view text) {
  constexpr const char* kKind = "a rate";
  constexpr const char* kExample = "500Mbit";
  auto s = split(text, kKind, kExample);
  if (!s) {
    return s.error();
  }
  std::string unit = lower(s->unit);
  if (unit.empty()) {
    return bad(text, kKind, kExample, "missing unit: bit, kbit, Mbit, Gbit or Tbit");
  }
  for (const char* suffix : {"bit/s", "bps", "bit"}) {
    const std::string_view sv(suffix);
    if (unit.size() >= sv.size() && unit.compare(unit.size() - sv.size(), sv.size(), sv) == 0) {
      const std::string prefix = unit.substr(0, unit.size() - sv.size());
      double scale = 0;
      if (prefix.empty()) {
        scale = 1;
      } else if (prefix == "k") {
        scale = 1e3;
      } else if (prefix == "m") {
        scale = 1e6;
      } else if (prefix == "g") {
        scale = 1e9;
      } else if (prefix == "t") {
        scale = 1e12;
      } else {
        break;
      }
      return s->number * scale;
    }
  }
  return bad(text, kKind, kExample, "unknown unit \"" + std::string(s->unit) + "\"; use bit, kbit, Mbit, Gbit or Tbit");
}

Result<std::uint64_t> parse_size_bytes(std::string_view text) {
  constexpr const char* kKind = "a size";
  constexpr const char* kExample = "4MiB";
  auto s = split(text, kKind, kExample);
  if (!s) {
    return s.error();
  }
  const std::string_view u = s->unit;
  double scale = 0;
  if (u.empty() || u == "B") {
    scale = 1;
  } else if (u == "kB" || u == "KB") {
    scale = 1e3;
  } else if (u == "MB") {
    scale = 1e6;
  } else if (u == "GB") {
    scale = 1e9;
  } else if (u == "TB") {
    scale = 1e12;
  } else if (u == "KiB") {
    scale = 1024.0;
  } else if (u == "MiB") {
    scale = 1024.0 * 1024;
  } else if (u == "GiB") {
    scale = 1024.0 * 1024 * 1024;
  } else if (u == "TiB") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return bad(text, kKind, kExample,
               "unknown unit \"" + std::string(u) + "\"; use B, KiB, MiB, GiB, TiB, kB, MB, GB or TB");
  }
  if (u.empty() && !s->number_is_integer) {
    return bad(text, kKind, kExample, "a bare number is bytes and must be whole");
  }
  const double bytes = s->number * scale;
  if (bytes >= 18446744073709551615.0) {
    return bad(text, kKind, kExample, "too large");
  }
  if (bytes != std::floor(bytes)) {
    return bad(text, kKind, kExample, "not a whole number of bytes");
  }
  return static_cast<std::uint64_t>(bytes);
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  constexpr const char* kKind = "a duration";
  constexpr const char* kExample = "250ms";
  auto s = split(text, kKind, kExample);
  if (!s) {
    return s.error();
  }
  const std::string_view u = s->unit;
  double scale = 0;
  if (u == "ns") {
    scale = 1;
  } else if (u == "us") {
    scale = 1e3;
  } else if (u == "ms") {
    scale = 1e6;
  } else if (u == "s") {
    scale = 1e9;
  } else if (u == "min") {
    scale = 60e9;
  } else if (u == "h") {
    scale = 3600e9;
  } else if (u.empty()) {
    return bad(text, kKind, kExample, "missing unit: ns, us, ms, s, min or h");
  } else {
    return bad(text, kKind, kExample, "unknown unit \"" + std::string(u) + "\"; use ns, us, ms, s, min or h");
  }
  const double ns = std::round(s->number * scale);
  if (ns > static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2)) {
    return bad(text, kKind, kExample, "too large");
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

namespace {
std::string three_digits(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, unit);
  return buf;
}
}  // namespace

std::string format_rate(double bps) {
  if (bps >= 1e12) {
    return three_digits(bps / 1e12, "Tbit");
  }
  if (bps >= 1e9) {
    return three_digits(bps / 1e9, "Gbit");
  }
  if (bps >= 1e6) {
    return three_digits(bps / 1e6, "Mbit");
  }
  if (bps >= 1e3) {
    return three_digits(bps / 1e3, "kbit");
  }
  return three_digits(bps, "bit");
}

std::string format_size(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024 * 1024) {
    return three_digits(b / (1024.0 * 1024 * 1024 * 1024), "TiB");
  }
  if (b >= 1024.0 * 1024 * 1024) {
    return three_digits(b / (1024.0 * 1024 * 1024), "GiB");
  }
  if (b >= 1024.0 * 1024) {
    return three_digits(b / (1024.0 * 1024), "MiB");
  }
  if (b >= 1024.0) {
    return three_digits(b / 1024.0, "KiB");
  }
  return std::to_string(bytes) + "B";
}

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) {
    return "0s";
  }
  if (a < 1e-6) {
    return three_digits(seconds * 1e9, "ns");
  }
  if (a < 1e-3) {
    return three_digits(seconds * 1e6, "us");
  }
  if (a < 1) {
    return three_digits(seconds * 1e3, "ms");
  }
  return three_digits(seconds, "s");
}

std::string format_duration(std::chrono::nanoseconds d) {
  return format_seconds(to_seconds(d));
}

}  // namespace contend
