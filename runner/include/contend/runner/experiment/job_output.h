#pragma once
// A training job's throughput from its own output (docs/own-job.md): one parser per log format
// (Megatron-LM's iteration line, torchtitan's step line, contend's JSON-lines convention, a
// user's regular expression), each one file behind one registry (common/registry.h), chosen by an
// experiment's "output" object. Parsers are pure: they read lines, one at a time, and say what
// step each reported; when each line was read is the caller's (job_log.h). A parser instance
// holds what earlier lines said (Megatron's iteration counter): one per rank's log, not
// thread-safe; the registry is constant and thread-safe.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "contend/common/json_reader.h"
#include "contend/common/registry.h"
#include "contend/common/result.h"

namespace contend::runner {

// What one line reported: `amount` of work (in the output's unit's numerator: samples, tokens)
// done in `seconds`; or, for formats that print only a rate, `rate` (amount per second) with
// `seconds` and `amount` 0; or, for lines that print no time, `amount` with `seconds` and `rate`
// 0. The caller takes the time since the previous step's line as the length of the last two.
struct JobStep {
  double amount = 0;
  double seconds = 0;
  double rate = 0;
};

// An experiment's "output": {"parser": "megatron"}, {"parser": "torchtitan"}, {"parser": "jsonl"},
// or {"parser": "regex", "pattern": "...", "captures": "rate"|"seconds"|"milliseconds"|"amount"|
// "line", "amount": N, "unit": "samples/s"}. Plain values.
struct OutputSpec {
  std::string parser = "jsonl";
  std::string pattern;            // regex: ECMAScript; its first group is the number
  std::string captures = "rate";  // regex: what the number is
  double amount = 0;              // regex: the work one step or line does (> 0), a captured amount's factor
  std::string unit;               // the throughput's unit; empty: the parser's own (unit())
};

// Reads one log's lines in order. Not thread-safe.
class OutputParser {
 public:
  virtual ~OutputParser() = default;
  // The step a line reports, or nullopt for any other line (most lines). Never fails: a line of
  // the format that cannot be read is not a step, nor is a line longer than 64 KiB (the regex
  // parser's: 4 KiB, as std::regex recurses per character). `line` has no trailing newline.
  virtual std::optional<JobStep> parse(std::string_view line) = 0;
};

struct OutputParserKind {
  std::string unit;  // the throughput's unit when the experiment names none: "samples/s", "tokens/s"
  std::function<std::unique_ptr<OutputParser>(const OutputSpec&)> make;
  std::function<Result<void>(const JsonReader&, OutputSpec&)> read;  // the kind's own keys; may be empty
};

// Every parser, in table order (runner/src/experiment/output/registry.cpp, a line each).
const Registry<OutputParserKind>& output_parsers();

// An experiment's "output" object, checked strictly (unknown keys, an unknown parser naming the
// known ones, a pattern that does not compile or has no group, a step time without "amount").
Result<OutputSpec> parse_output(const JsonReader& r);
// A parser for `spec` (as parse_output returned it; another spec is a bug, and aborts). It reads a
// line as a terminal shows it: ANSI escape sequences removed and, when the line has carriage
// returns (a progress bar redrawn in place, a CRLF ending), only its last non-empty piece.
std::unique_ptr<OutputParser> make_output_parser(const OutputSpec& spec);
// The unit of the throughput `spec` reads: its "unit", else its parser's.
std::string output_unit(const OutputSpec& spec);

}  // namespace contend::runner
