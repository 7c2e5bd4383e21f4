#pragma once
// Private: each output parser's line in the registry (experiment/output/registry.cpp), defined in its file
// (experiment/output/<name>.cpp), and what the parsers share: the guard every line passes first, and
// reading numbers as training logs print them ("1,234", "1234.5", "1.000000E-04").

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "contend/runner/experiment/job_output.h"

namespace contend::runner::detail {

using OutputParserItem = Registry<OutputParserKind>::Item;

// The longest line a parser reads (job_log.h's kMaxLogLine, the piece a rank log cuts a runaway
// line into): a longer line is not a step.
inline constexpr std::size_t kMaxOutputLine = std::size_t{64} * 1024;

// `inner` behind what every parser shares (make_output_parser): a line longer than kMaxOutputLine
// is not a step; a line is read as a terminal shows it, its ANSI escape sequences (colours)
// removed and, when it has carriage returns (a progress bar redrawn in place, a CRLF ending), only
// its last non-empty piece. Not thread-safe, as `inner`.
std::unique_ptr<OutputParser> guard_lines(std::unique_ptr<OutputParser> inner);

// `line` without its ANSI escape sequences: CSI ("\x1b[31m", "\x1b[38;2;54;234;195m"), OSC
// (ended by BEL or ESC \) and two-character escapes; a sequence cut off at the end is dropped.
std::string strip_ansi(std::string_view line);

// A number at the start of `text`, after spaces and tabs: an optional sign, digits with optional
// thousands separators ("1,234,567": a comma then exactly three digits, in the integer part only),
// an optional fraction and an optional exponent ("1.000000E-04"). Not "inf", "nan" or hex.
// `length` counts what was read, the leading blanks included. nullopt when no number is there or
// it does not fit a finite double.
struct LogNumber {
  double value = 0;
  std::size_t length = 0;
};
std::optional<LogNumber> read_log_number(std::string_view text);

// The whole of `text` (blanks around it allowed) as one read_log_number number; nullopt otherwise.
std::optional<double> parse_log_number(std::string_view text);

// Each parser's registration, in its file: experiment/output/<name>.cpp.
OutputParserItem megatron_parser();
OutputParserItem torchtitan_parser();
OutputParserItem jsonl_parser();
OutputParserItem regex_parser();

}  // namespace contend::runner::detail
