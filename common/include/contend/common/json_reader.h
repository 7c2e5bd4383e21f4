#pragma once
// JsonReader: strict, path-aware reading of contend's JSON files (scenarios, experiments, jobs).
// Every error names the file, the JSON pointer and what was expected:
//   scenario.json: /timeline/3/rate: expected a rate like "500Mbit", got "fast"
// Unknown keys are errors (check_keys). A reader is a view: it borrows the json it reads, which
// must outlive it. Not thread-safe.

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/json.h"
#include "contend/common/result.h"

namespace contend {

class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string source, std::string path = "")
      : value_(&value), source_(std::move(source)), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& source() const { return source_; }
  bool has(const std::string& key) const { return value_->is_object() && value_->contains(key); }

  // The member `key` of this object (requires has(key)), or element `i` of this array.
  JsonReader at(const std::string& key) const;
  JsonReader at(std::size_t i) const;

  // An error located here: "<source>: <path>: <what>".
  Error error(const std::string& what) const;
  // An error located at member `key`.
  Error error_at(const std::string& key, const std::string& what) const;

  // kParse unless this is an object whose keys are all in `allowed`; names the first stranger
  // and lists what is allowed.
  Result<void> check_keys(std::initializer_list<const char*> allowed) const;
  // The same with a list made at run time (keys from a registry).
  Result<void> check_keys(const std::vector<std::string>& allowed) const;
  Result<void> expect_object() const;
  // kParse unless member "schema" is "contend.<kind>/<version>" (every file contend reads has one).
  Result<void> expect_schema(const std::string& kind, int version) const;
  Result<void> expect_array() const;

  // Required members (kParse when missing or of the wrong type).
  Result<std::string> string(const std::string& key) const;
  Result<double> number(const std::string& key) const;
  Result<std::int64_t> integer(const std::string& key) const;
  Result<double> rate_bps(const std::string& key) const;                    // "500Mbit"
  Result<std::chrono::nanoseconds> duration(const std::string& key) const;  // "250ms"

  // Optional members: std::nullopt when absent, an error when present but wrong.
  Result<std::optional<std::string>> optional_string(const std::string& key) const;
  Result<std::optional<double>> optional_number(const std::string& key) const;
  Result<std::optional<std::int64_t>> optional_integer(const std::string& key) const;
  Result<std::optional<bool>> optional_boolean(const std::string& key) const;
  Result<std::optional<double>> optional_rate_bps(const std::string& key) const;
  Result<std::optional<std::uint64_t>> optional_size_bytes(const std::string& key) const;
  Result<std::optional<std::chrono::nanoseconds>> optional_duration(const std::string& key) const;

 private:
  const nlohmann::json* value_;
  std::string source_;
  std::string path_;
};

// The optional integer member `key` of `r` into `out` (left as it is when absent), refused outside
// [lo, hi] before it is narrowed: "expected 1 to 64, got 65".
Result<void> read_count(const JsonReader& r, const std::string& key, long long lo, long long hi, int& out);

// One of contend's files (an experiment, a scenario, a flow job), opened: `text` parsed, its keys
// checked against `keys` (with "schema") and its schema against "contend.<kind>/<version>". The
// value returned is what a JsonReader over it then reads. Errors name `source` as JsonReader's do.
// Held to `limits` (parse_json's).
Result<nlohmann::json> parse_document(const std::string& text, const std::string& source, const std::string& kind,
                                      int version, std::initializer_list<const char*> keys,
                                      const JsonLimits& limits = {});

// The text of one of contend's JSON files, `what` it is ("an experiment file"): at most
// kMaxJsonBytes (a device that never ends is cut there), kInvalidArgument "<path>: more than 4MiB,
// the most <what> may hold" beyond; kNotFound/kPermission naming the path.
Result<std::string> read_json_text(const std::string& path, const std::string& what);

// Reads and parses a JSON file: read_json_text's errors, kParse with nlohmann's position on a
// syntax error.
Result<nlohmann::json> read_json_file(const std::string& path);

}  // namespace contend
