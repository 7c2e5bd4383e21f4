// "regex": a user's regular expression, for a log no other parser reads:
//   {"parser": "regex", "pattern": "step time: ([0-9.]+) ms", "captures": "milliseconds", "amount": 32}
//   {"parser": "regex", "pattern": "([0-9.]+)it/s", "captures": "rate", "unit": "it/s"}
//   {"parser": "regex", "pattern": "Epoch [0-9]+ \\|", "captures": "line", "amount": 512}
// ECMAScript (std::regex), searched for anywhere in the line; its first group is the number
// (thousands separators allowed, blanks around it too). "captures": "rate" (the default): the
// number is the throughput per second, in "unit", which a rate must name (a rate's unit is
// whatever the job counts: only the user knows it). "seconds" or "milliseconds": the number is
// one step's time, and "amount" (required, above 0) the work that step does, in "unit" (default
// samples/s). "amount": the number times "amount" (default 1) is the work done since the previous
// matching line. "line": no number (the pattern needs no group); each matching line is "amount"
// (required) of work since the previous one. With "amount" and "line" the caller times the step
// by when the lines were printed (the guard's stamps), so a log that prints no time still gives
// one. A line whose group did not take part in the match, or is not a number above 0, is not a
// step.
// libstdc++'s std::regex backtracks recursively, a stack frame or more per character, and a
// leading ".*" makes each search quadratic in the line: a 16 KiB line can exhaust an 8 MiB stack
// and a 4 KiB one takes a third of a second. So this parser reads lines up to kMaxRegexLine
// (4 KiB; step lines are a few hundred characters) and longer ones are not steps.

#include <cmath>
#include <limits>
#include <regex>

#include "contend/common/check.h"
#include "experiment/output/output_parser.h"

namespace contend::runner::detail {
namespace {

constexpr std::size_t kMaxRegexLine = std::size_t{4} * 1024;
constexpr std::size_t kMaxPatternLength = 1024;

enum class Captures { kRate, kSeconds, kMilliseconds, kAmount, kLine };

std::optional<Captures> captures_of(const std::string& text) {
  if (text == "rate") {
    return Captures::kRate;
  }
  if (text == "seconds") {
    return Captures::kSeconds;
  }
  if (text == "milliseconds") {
    return Captures::kMilliseconds;
  }
  if (text == "amount") {
    return Captures::kAmount;
  }
  if (text == "line") {
    return Captures::kLine;
  }
  return std::nullopt;
}

// `pattern` as ECMAScript; the error says what std::regex said.
Result<std::regex> compile(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::exception& e) {
    return make_error(Errc::kInvalidArgument,
                      "\"" + excerpt(pattern) + "\" is not an ECMAScript regular expression: " + e.what());
  }
}

class RegexParser final : public OutputParser {
 public:
  RegexParser(std::regex re, Captures captures, double amount)
      : re_(std::move(re)), captures_(captures), amount_(amount) {}

  std::optional<JobStep> parse(std::string_view line) override {
    if (line.size() > kMaxRegexLine) {
      return std::nullopt;
    }
    std::cmatch match;
    try {
      if (!std::regex_search(line.data(), line.data() + line.size(), match, re_)) {
        return std::nullopt;
      }
    } catch (const std::exception&) {  // std::regex_error: error_complexity, error_stack
      return std::nullopt;
    }
    if (captures_ == Captures::kLine) {
      return JobStep{amount_, 0, 0};
    }
    if (match.size() < 2 || !match[1].matched) {
      return std::nullopt;
    }
    const auto number = parse_log_number(std::string_view(match[1].first, static_cast<std::size_t>(match[1].length())));
    if (!number || !(*number > 0)) {
      return std::nullopt;
    }
    switch (captures_) {
      case Captures::kRate:
        return JobStep{0, 0, *number};
      case Captures::kSeconds:
        return JobStep{amount_, *number, 0};
      case Captures::kMilliseconds:
        return JobStep{amount_, *number / 1000.0, 0};
      case Captures::kAmount:
        return JobStep{*number * amount_, 0, 0};
      case Captures::kLine:
        break;  // returned above
    }
    return std::nullopt;
  }

 private:
  std::regex re_;
  Captures captures_;
  double amount_;
};

std::unique_ptr<OutputParser> make_regex(const OutputSpec& spec) {
  auto re = compile(spec.pattern);
  const auto captures = captures_of(spec.captures);
  CONTEND_CHECK(re.ok() && captures, "a regex output parser from an unchecked spec (parse_output checks it): \"" +
                                         excerpt(spec.pattern) + "\", captures \"" + spec.captures + "\"");
  return std::make_unique<RegexParser>(std::move(*re), *captures, spec.amount);
}

// "pattern": 1 to kMaxPatternLength characters of ECMAScript, with a group when `needs_group`.
Result<void> read_pattern(const JsonReader& r, const std::string& pattern, bool needs_group) {
  if (pattern.empty() || pattern.size() > kMaxPatternLength) {
    return r.error_at("pattern", "expected a regular expression of 1 to " + std::to_string(kMaxPatternLength) +
                                     " characters, got " + std::to_string(pattern.size()));
  }
  auto re = compile(pattern);
  if (!re) {
    return r.error_at("pattern", re.error().message);
  }
  if (needs_group && re->mark_count() == 0) {
    return r.error_at("pattern", "\"" + excerpt(pattern) +
                                     "\" has no group; put the number in parentheses, as in \"step time: ([0-9.]+)\"");
  }
  return {};
}

// "amount" as `kind` wants it: none with a rate (whose "unit" is required), above 0 and required
// with a step time or a line, above 0 and 1 unless given with a captured amount.
Result<void> read_amount(const JsonReader& r, Captures kind, std::optional<double> amount, OutputSpec& spec) {
  if (kind == Captures::kRate) {
    if (amount) {
      return r.error_at("amount", "not used with \"captures\": \"rate\" (the number is the throughput itself)");
    }
    if (spec.unit.empty()) {
      return r.error_at("unit", "missing; a rate needs its unit, what it counts per second (\"tokens/s\", \"it/s\")");
    }
    return {};
  }
  if (!amount && kind == Captures::kAmount) {
    spec.amount = 1;
    return {};
  }
  if (!amount) {
    return r.error_at("amount", kind == Captures::kLine
                                    ? "missing; a step line needs the work done since the previous one (in samples "
                                      "unless \"unit\" says otherwise)"
                                    : "missing; a step time needs the work one step does (the global batch size, in "
                                      "samples unless \"unit\" says otherwise)");
  }
  if (!std::isfinite(*amount) || !(*amount > 0)) {
    return r.error_at("amount", "expected a number above 0, got " + quote_json(r.json().at("amount")));
  }
  spec.amount = *amount;
  return {};
}

// The regex's own keys; `spec.unit` is already read (parse_output).
Result<void> read_regex(const JsonReader& r, OutputSpec& spec) {
  auto pattern = r.string("pattern");
  auto captures = r.optional_string("captures");
  auto amount = r.optional_number("amount");
  if (auto e = first_error(pattern, captures, amount)) {
    return *e;
  }
  spec.captures = captures->value_or("rate");
  const auto kind = captures_of(spec.captures);
  if (!kind) {
    return r.error_at("captures", "expected \"rate\", \"seconds\", \"milliseconds\", \"amount\" or \"line\", got \"" +
                                      excerpt(spec.captures) + "\"");
  }
  if (auto ok = read_pattern(r, *pattern, *kind != Captures::kLine); !ok) {
    return ok;
  }
  spec.pattern = *pattern;
  return read_amount(r, *kind, *amount, spec);
}

// "pattern": required text (ParamDef has a factory for a path, not for plain text).
ParamDef pattern_param() {
  ParamDef d;
  d.key = "pattern";
  d.type = ParamType::kText;
  d.help = "ECMAScript, searched for in each line; its first group is the number";
  return d;
}

}  // namespace

OutputParserItem regex_parser() {
  return {{"",
           "regex",
           "a user's ECMAScript regular expression whose first group is a rate, a step time or an amount, or whose "
           "lines are steps",
           {pattern_param(),
            ParamDef::choice("captures", "what the number is", "rate",
                             {"rate", "seconds", "milliseconds", "amount", "line"}),
            ParamDef::number("amount",
                             "the work one step does, with a step time or a line (required then, above 0); a "
                             "captured amount's multiplier",
                             "0", 0, std::numeric_limits<double>::infinity())}},
          OutputParserKind{"samples/s", make_regex, read_regex}};
}

}  // namespace contend::runner::detail
