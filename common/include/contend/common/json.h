#pragma once
// JSON helpers shared by every writer and reader of contend's files.
// Every JSON document contend writes starts with "schema": "contend.<kind>/<version>".

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "contend/common/result.h"

namespace contend {

// {"schema": "contend.<kind>/<version>"}, to which the writer adds its fields (nlohmann's
// ordered_json keeps "schema" first in the output).
nlohmann::ordered_json json_document(const std::string& kind, int version);

// What every JSON text contend reads is held to, whatever its kind (experiments, scenarios, flow
// jobs, results, state: docs/experiment-format.md#limits): its size, how deep its arrays and
// objects nest, and how many values it holds, all checked before the document is built.
inline constexpr std::size_t kMaxJsonBytes = 4u << 20;
inline constexpr int kMaxJsonDepth = 32;
inline constexpr std::size_t kMaxJsonValues = 1u << 20;
struct JsonLimits {
  std::size_t bytes = kMaxJsonBytes;
  int depth = kMaxJsonDepth;
  std::size_t values = kMaxJsonValues;
};

// Parses `text` within `limits` (those above unless a kind documents its own). A syntax error, a
// limit passed, a key twice in one object or a NUL character in a string or key becomes kParse
// "<source>: <what>".
Result<nlohmann::json> parse_json(const std::string& text, const std::string& source, const JsonLimits& limits = {});

// A value as an error message quotes it: its JSON text as excerpt() cuts it (result.h), bytes
// that are not UTF-8 replaced.
std::string quote_json(const nlohmann::json& v);

// Whether `s` is valid UTF-8 (what a JSON document can hold: a path contend records must be).
bool valid_utf8(std::string_view s);

}  // namespace contend
