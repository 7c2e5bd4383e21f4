// The one table of output parsers: a line each, in the order errors list them.
// tests/unit/emulator/registry_docs_test.cpp fails when this table and docs/own-job.md's "Output parsers"
// disagree. An experiment's "output" object is read here: the keys every parser takes ("parser",
// "unit"), then the chosen parser's own (its entry's parameters, read by its kind's `read`).

#include "contend/common/check.h"
#include "experiment/output/output_parser.h"

namespace contend::runner {
namespace {

constexpr std::size_t kMaxUnitLength = 32;

const Registry<OutputParserKind>::Item& item_of(const OutputSpec& spec) {
  const auto* item = output_parsers().find(spec.parser);
  CONTEND_CHECK(item != nullptr, "output parser \"" + spec.parser + "\" is not registered (parse_output checks it)");
  return *item;
}

// A unit as results print it: 1 to 32 bytes, no control characters.
bool valid_unit(const std::string& unit) {
  if (unit.empty() || unit.size() > kMaxUnitLength) {
    return false;
  }
  for (const char c : unit) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return false;
    }
  }
  return true;
}

}  // namespace

const Registry<OutputParserKind>& output_parsers() {
  using namespace detail;
  static const Registry<OutputParserKind> kTable(
      "output parser", {megatron_parser(), torchtitan_parser(), jsonl_parser(), regex_parser()});
  return kTable;
}

Result<OutputSpec> parse_output(const JsonReader& r) {
  if (auto ok = r.expect_object(); !ok) {
    return ok.error();
  }
  auto parser = r.optional_string("parser");
  auto unit = r.optional_string("unit");
  if (auto e = first_error(parser, unit)) {
    return *e;
  }
  OutputSpec spec;
  spec.parser = parser->value_or(spec.parser);
  const auto* item = output_parsers().find(spec.parser);
  if (item == nullptr) {
    std::string known;
    for (const std::string& name : output_parsers().names()) {
      known += (known.empty() ? "" : ", ") + name;
    }
    return r.error_at("parser", "unknown output parser \"" + excerpt(spec.parser) + "\"; expected one of: " + known);
  }
  std::vector<std::string> keys = {"parser", "unit"};
  for (const ParamDef& param : item->entry.params) {
    keys.push_back(param.key);
  }
  if (auto ok = r.check_keys(keys); !ok) {
    return ok.error();
  }
  if (*unit) {
    if (!valid_unit(**unit)) {
      return r.error_at("unit", "expected a unit of 1 to " + std::to_string(kMaxUnitLength) +
                                    " characters without control characters, like \"samples/s\", got " +
                                    quote_json(r.json().at("unit")));
    }
    spec.unit = **unit;
  }
  if (item->kind.read) {
    if (auto ok = item->kind.read(r, spec); !ok) {
      return ok.error();
    }
  }
  return spec;
}

std::unique_ptr<OutputParser> make_output_parser(const OutputSpec& spec) {
  return detail::guard_lines(item_of(spec).kind.make(spec));
}

std::string output_unit(const OutputSpec& spec) {
  return spec.unit.empty() ? item_of(spec).kind.unit : spec.unit;
}

}  // namespace contend::runner
