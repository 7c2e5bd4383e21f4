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

std::optional<LogNumber> read_log_number(std::string_view text) {
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n && is_blank(text[i])) {
    ++i;
  }
  std::string plain;  // the number without separators, for from_chars
  if (i < n && (text[i] == '-' || text[i] == '+')) {
    if (text[i] == '-') {
      plain += '-';
    }
    ++i;
  }
  std::size_t digits = 0;
  std::size_t group = 0;  // digits since the start or the last separator
  bool grouped = false;
  while (i < n) {
    if (is_digit(text[i])) {
      plain += text[i++];
      ++digits;
      ++group;
      continue;
    }
    // A separator only between groups: 1 to 3 digits first, exactly 3 after each comma.
    if (text[i] == ',' && group > 0 && group <= 3 && (!grouped || group == 3) && i + 3 < n && is_digit(text[i + 1]) &&
        is_digit(text[i + 2]) && is_digit(text[i + 3]) && (i + 4 >= n || !is_digit(text[i + 4]))) {
      grouped = true;
      group = 0;
      ++i;
      continue;
    }
    break;
  }
  if (i + 1 < n && text[i] == '.' && is_digit(text[i + 1])) {
    plain += text[i++];
    while (i < n && is_digit(text[i])) {
      plain += text[i++];
      ++digits;
    }
  }
  if (digits == 0) {
    return std::nullopt;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    std::string exponent = "e";
    if (j < n && (text[j] == '-' || text[j] == '+')) {
      exponent += text[j++];
    }
    if (j < n && is_digit(text[j])) {
      while (j < n && is_digit(text[j])) {
        exponent += text[j++];
      }
      plain += exponent;
      i = j;
    }
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(plain.data(), plain.data() + plain.size(), value);
  if (ec != std::errc() || end != plain.data() + plain.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return LogNumber{value, i};
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
