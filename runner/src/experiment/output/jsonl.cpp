// "jsonl": contend's JSON-lines convention (docs/own-job.md#output-parsers), for any script: a line
// that is a JSON object with "schema": "contend.step/1" and either
//   {"schema": "contend.step/1", "samples": 32, "seconds": 0.41}   a step: this much work in this long
//   {"schema": "contend.step/1", "throughput": 78.0}               a rate-only step, per second
// Other members are the script's own and ignored. A prefix before the object ("[rank0]:", a
// logger's "INFO:root:") is allowed: the object is read from the line's first '{' and must end it.
// Any other line, other JSON included, is not a step, and neither is a contend.step line with a
// key twice or whose numbers are missing, not numbers, or not above 0: "samples" and "seconds"
// when either is there ("throughput" is then ignored), else "throughput".

#include <cmath>

#include "contend/common/json.h"
#include "experiment/output/output_parser.h"

namespace contend::runner::detail {
namespace {

constexpr std::string_view kStepSchema = "contend.step/1";

// The member `key` of `object` when it is a finite number above 0.
std::optional<double> positive(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) {
    return std::nullopt;
  }
  const double value = it->get<double>();
  return std::isfinite(value) && value > 0 ? std::optional<double>(value) : std::nullopt;
}

std::optional<JobStep> read_step(const nlohmann::json& object) {
  const auto schema = object.find("schema");
  if (schema == object.end() || !schema->is_string() || schema->get_ref<const std::string&>() != kStepSchema) {
    return std::nullopt;
  }
  if (object.contains("samples") || object.contains("seconds")) {
    const auto samples = positive(object, "samples");
    const auto seconds = positive(object, "seconds");
    if (!samples || !seconds) {
      return std::nullopt;
    }
    return JobStep{*samples, *seconds, 0};
  }
  const auto throughput = positive(object, "throughput");
  return throughput ? std::optional<JobStep>(JobStep{0, 0, *throughput}) : std::nullopt;
}

class JsonlParser final : public OutputParser {
 public:
  std::optional<JobStep> parse(std::string_view line) override {
    // Only a line that can be a step is parsed: most lines are the job's own talk.
    const std::size_t open = line.find('{');
    if (open == std::string_view::npos || line.find(kStepSchema, open) == std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view text = line.substr(open);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
      text.remove_suffix(1);
    }
    if (text.empty() || text.back() != '}') {
      return std::nullopt;
    }
    // Held to what every JSON contend reads is (json.h: limits, no key twice, no NUL), else not a
    // step; get<> and allocation may still throw, so they are caught here.
    try {
      const auto object = parse_json(std::string(text), "a step line");
      if (!object || !object->is_object()) {
        return std::nullopt;
      }
      return read_step(*object);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
};

}  // namespace

OutputParserItem jsonl_parser() {
  return {{"", "jsonl", "contend's JSON lines: an object with \"schema\": \"contend.step/1\" per step", {}},
          OutputParserKind{"samples/s", [](const OutputSpec&) { return std::make_unique<JsonlParser>(); }, {}}};
}

}  // namespace contend::runner::detail
