// "torchtitan": torchtitan's step line (torchtitan/components/metrics.py, MetricsProcessor.log;
// train.py before 2025), logged at step 1 and every metrics.log_freq steps, coloured unless
// metrics.disable_color_printing:
//   [titan] 2025-03-10 00:46:29,123 - root - INFO - step: 10  loss:  9.12340  grad_norm:  1.2345
//   memory: 12.34GiB(15.67%)  tps: 1,234  tflops: 56.78  mfu: 12.34%
// (one line). "tps" (before November 2024 "wps") is tokens per second per GPU since the previous
// step line: the rank's tokens over the time and the non-data-parallel degree (tensor x pipeline x
// context parallel), written with thousands separators. A line is a rate-only step of that many
// tokens/s; the validation line ("validate step: ...") is not a step. The colours are gone by the
// time a line gets here (guard_lines).

#include "experiment/output/output_parser.h"

namespace contend::runner::detail {
namespace {

bool is_word_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Where `label` starts as a word of its own ("tps:", not "xtps:"), or npos.
std::size_t find_word(std::string_view line, std::string_view label, std::size_t from = 0) {
  for (std::size_t at = line.find(label, from); at != std::string_view::npos; at = line.find(label, at + 1)) {
    if (at == 0 || !is_word_char(line[at - 1])) {
      return at;
    }
  }
  return std::string_view::npos;
}

// Whether the word before position `at` (blanks skipped) is `word`.
bool preceded_by(std::string_view line, std::size_t at, std::string_view word) {
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ') {
    --end;
  }
  return end >= word.size() && line.substr(end - word.size(), word.size()) == word &&
         (end == word.size() || !is_word_char(line[end - word.size() - 1]));
}

class TorchtitanParser final : public OutputParser {
 public:
  std::optional<JobStep> parse(std::string_view line) override {
    const std::size_t step = find_word(line, "step:");
    if (step == std::string_view::npos || preceded_by(line, step, "validate")) {
      return std::nullopt;
    }
    // "step: <N>" then the rate, after it on the line.
    const auto number = read_log_number(line.substr(step + 5));
    if (!number) {
      return std::nullopt;
    }
    const std::size_t after = step + 5 + number->length;
    std::size_t rate_at = find_word(line, "tps:", after);
    if (rate_at == std::string_view::npos) {
      rate_at = find_word(line, "wps:", after);
    }
    if (rate_at == std::string_view::npos) {
      return std::nullopt;
    }
    const auto rate = read_log_number(line.substr(rate_at + 4));
    if (!rate || !(rate->value > 0)) {
      return std::nullopt;
    }
    return JobStep{0, 0, rate->value};
  }
};

}  // namespace

OutputParserItem torchtitan_parser() {
  return {{"", "torchtitan", "torchtitan's step line: its tps, tokens per second per GPU", {}},
          OutputParserKind{"tokens/s", [](const OutputSpec&) { return std::make_unique<TorchtitanParser>(); }, {}}};
}

}  // namespace contend::runner::detail
