// What every output parser shares: the line guard and numbers as logs print them.

#include "experiment/output/output_parser.h"

#include <charconv>
#include <cmath>

namespace contend::runner::detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

class GuardedParser final : public OutputParser {
 public:
  explicit GuardedParser(std::unique_ptr<OutputParser> inner) : inner_(std::move(inner)) {}

  std::optional<JobStep> parse(std::string_view line) override {
    if (line.size() > kMaxOutputLine) {
      return std::nullopt;
    }
    // Most lines have neither: they are passed on as they are, without a copy.
    if (line.find('\x1b') == std::string_view::npos && line.find('\r') == std::string_view::npos) {
      return inner_->parse(line);
    }
    std::string_view shown = line;
    // What a terminal is left showing after carriage returns: the last piece that has something.
    while (!shown.empty()) {
      const std::size_t cr = shown.rfind('\r');
      if (cr == std::string_view::npos) {
        break;
      }
      if (cr + 1 < shown.size()) {
        shown = shown.substr(cr + 1);
        break;
      }
      shown = shown.substr(0, cr);
    }
    const std::string plain = strip_ansi(shown);
    return inner_->parse(plain);
  }

 private:
  std::unique_ptr<OutputParser> inner_;
};

}  // namespace

std::unique_ptr<OutputParser> guard_lines(std::unique_ptr<OutputParser> inner) {
  return std::make_unique<GuardedParser>(std::move(inner));
}

std::string strip_ansi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '\x1b') {
      out += line[i++];
      continue;
    }
    ++i;
    if (i >= line.size()) {
      break;
    }
    if (line[i] == '[') {
      // CSI: parameter and intermediate bytes (0x20-0x3f), then one final byte (0x40-0x7e).
      ++i;
      while (i < line.size() && line[i] >= 0x20 && line[i] <= 0x3f) {
        ++i;
      }
      if (i < line.size() && line[i] >= 0x40 && line[i] <= 0x7e) {
        ++i;
      }
    } else if (line[i] == ']') {
      // OSC (a window title, a hyperlink): up to BEL or ESC backslash.
      ++i;
      while (i < line.size() && line[i] != '\x07' &&
             !(line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '\\')) {
        ++i;
      }
      i += i < line.size() && line[i] == '\x07' ? 1 : 2;
    } else {
      // Two characters (ESC M), or a character set choice (ESC ( B): intermediates, then a final.
      while (i < line.size() && line[i] >= 0x20 && line[i] <= 0x2f) {
        ++i;
      }
      if (i < line.size()) {
        ++i;
      }
    }
  }
  return out;
}

namespace {

// A number being read from a log line: where it is, and its text without separators (for
// from_chars).
struct NumberScan {
  std::string_view text;
  std::size_t i = 0;
  std::string plain;
  std::size_t digits = 0;

  bool digit_at(std::size_t at) const { return at < text.size() && is_digit(text[at]); }

  // The sign and the whole part: digits, grouped by commas only between groups (1 to 3 digits
  // first, exactly 3 after each comma: "1,234,567", never "12,34").
  void whole() {
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
      plain += text[i] == '-' ? "-" : "";
      ++i;
    }
    std::size_t group = 0;  // digits since the start or the last separator
    bool grouped = false;
    while (i < text.size()) {
      if (digit_at(i)) {
        plain += text[i++];
        ++digits;
        ++group;
      } else if (text[i] == ',' && group > 0 && group <= 3 && (!grouped || group == 3) && digit_at(i + 1) &&
                 digit_at(i + 2) && digit_at(i + 3) && !digit_at(i + 4)) {
        grouped = true;
        group = 0;
        ++i;
      } else {
        break;
      }
    }
  }

  // ".digits", when a digit follows the point.
  void fraction() {
    if (i + 1 < text.size() && text[i] == '.' && digit_at(i + 1)) {
      plain += text[i++];
      while (digit_at(i)) {
        plain += text[i++];
        ++digits;
      }
    }
  }

  // "e[+-]digits", when digits follow (else the "e" is not the number's).
  void exponent() {
    if (i >= text.size() || (text[i] != 'e' && text[i] != 'E')) {
      return;
    }
    std::size_t j = i + 1;
    std::string e = "e";
    if (j < text.size() && (text[j] == '-' || text[j] == '+')) {
      e += text[j++];
    }
    if (digit_at(j)) {
      while (digit_at(j)) {
        e += text[j++];
      }
      plain += e;
      i = j;
    }
  }
};

}  // namespace

std::optional<LogNumber> read_log_number(std::string_view text) {
  NumberScan scan{text, 0, {}, 0};
  while (scan.i < text.size() && is_blank(text[scan.i])) {
    ++scan.i;
  }
  scan.whole();
  scan.fraction();
  if (scan.digits == 0) {
    return std::nullopt;
  }
  scan.exponent();
  double value = 0;
  const auto [end, ec] = std::from_chars(scan.plain.data(), scan.plain.data() + scan.plain.size(), value);
  if (ec != std::errc() || end != scan.plain.data() + scan.plain.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return LogNumber{value, scan.i};
}

std::optional<double> parse_log_number(std::string_view text) {
  while (!text.empty() && is_blank(text.back())) {
    text.remove_suffix(1);
  }
  const auto number = read_log_number(text);
  if (!number || number->length != text.size()) {
    return std::nullopt;
  }
  return number->value;
}

}  // namespace contend::runner::detail
