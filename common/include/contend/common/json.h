#pragma once
// JSON helpers shared by every writer and reader of contend's files.
// Every JSON document contend writes starts with "schema": "contend.<kind>/<version>".

#include <nlohmann/json.hpp>
#include <string>

#include "contend/common/result.h"

namespace contend {

// {"schema": "contend.<kind>/<version>"}, to which the writer adds its fields (nlohmann's
// ordered_json keeps "schema" first in the output).
nlohmann::ordered_json json_document(const std::string& kind, int version);

// Parses `text`; a syntax error becomes kParse "<source>: <what nlohmann said>".
Result<nlohmann::json> parse_json(const std::string& text, const std::string& source);

}  // namespace contend
