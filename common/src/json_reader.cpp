#include "contend/common/json_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/units.h"

namespace contend {
namespace {

std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string type_name(const nlohmann::json& v) {
  return v.type_name();
}

}  // namespace

JsonReader JsonReader::at(const std::string& key) const {
  return JsonReader(value_->at(key), source_, path_ + "/" + escape_pointer(key));
}

JsonReader JsonReader::at(std::size_t i) const {
  return JsonReader(value_->at(i), source_, path_ + "/" + std::to_string(i));
}

Error JsonReader::error(const std::string& what) const {
  return make_error(Errc::kParse, source_ + ": " + (path_.empty() ? std::string("/") : path_) + ": " + what);
}

Error JsonReader::error_at(const std::string& key, const std::string& what) const {
  return make_error(Errc::kParse, source_ + ": " + path_ + "/" + escape_pointer(key) + ": " + what);
}

Result<void> JsonReader::expect_object() const {
  if (!value_->is_object()) {
    return error("expected an object, got " + type_name(*value_));
  }
  return {};
}

Result<void> JsonReader::expect_array() const {
  if (!value_->is_array()) {
    return error("expected an array, got " + type_name(*value_));
  }
  return {};
}

Result<void> JsonReader::expect_schema(const std::string& kind, int version) const {
  const std::string expected = "contend." + kind + "/" + std::to_string(version);
  auto schema = string("schema");
  if (!schema) {
    return schema.error();
  }
  if (*schema != expected) {
    return error_at("schema", "expected \"" + expected + "\", got \"" + excerpt(*schema) + "\"");
  }
  return {};
}

Result<void> JsonReader::check_keys(std::initializer_list<const char*> allowed) const {
  return check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

Result<void> JsonReader::check_keys(const std::vector<std::string>& allowed) const {
  if (auto ok = expect_object(); !ok) {
    return ok;
  }
  for (const auto& item : value_->items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
      std::string list;
      for (const std::string& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
      }
      return error_at(excerpt(item.key()), "unknown key; expected one of: " + list);
    }
  }
  return {};
}

Result<std::optional<std::string>> JsonReader::optional_string(const std::string& key) const {
  if (!has(key)) {
    return std::optional<std::string>();
  }
  const auto& v = value_->at(key);
  if (!v.is_string()) {
    return error_at(key, "expected a string, got " + type_name(v) + " " + quote_json(v));
  }
  return std::optional<std::string>(v.get<std::string>());
}

Result<std::optional<double>> JsonReader::optional_number(const std::string& key) const {
  if (!has(key)) {
    return std::optional<double>();
  }
  const auto& v = value_->at(key);
  if (!v.is_number()) {
    return error_at(key, "expected a number, got " + type_name(v) + " " + quote_json(v));
  }
  return std::optional<double>(v.get<double>());
}

Result<std::optional<std::int64_t>> JsonReader::optional_integer(const std::string& key) const {
  if (!has(key)) {
    return std::optional<std::int64_t>();
  }
  const auto& v = value_->at(key);
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
    return error_at(key, "expected a whole number below 2^63, got " + quote_json(v));
  }
  return std::optional<std::int64_t>(v.get<std::int64_t>());
}

Result<std::optional<bool>> JsonReader::optional_boolean(const std::string& key) const {
  if (!has(key)) {
    return std::optional<bool>();
  }
  const auto& v = value_->at(key);
  if (!v.is_boolean()) {
    return error_at(key, "expected true or false, got " + quote_json(v));
  }
  return std::optional<bool>(v.get<bool>());
}

namespace {
// Optional member parsed from a string with one of common/units' parsers.
template <typename T, typename Parse>
Result<std::optional<T>> optional_unit(const JsonReader& r, const std::string& key, Parse parse) {
  auto text = r.optional_string(key);
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return std::optional<T>();
  }
  auto value = parse(**text);
  if (!value) {
    return r.error_at(key, value.error().message);
  }
  return std::optional<T>(*value);
}

template <typename T>
Result<T> required(const JsonReader& r, const std::string& key, Result<std::optional<T>> value, const char* kind) {
  if (!value) {
    return value.error();
  }
  if (!*value) {
    return r.error_at(key, std::string("missing; expected ") + kind);
  }
  return **value;
}
}  // namespace

Result<std::optional<double>> JsonReader::optional_rate_bps(const std::string& key) const {
  return optional_unit<double>(*this, key, parse_rate_bps);
}
Result<std::optional<std::uint64_t>> JsonReader::optional_size_bytes(const std::string& key) const {
  return optional_unit<std::uint64_t>(*this, key, parse_size_bytes);
}
Result<std::optional<std::chrono::nanoseconds>> JsonReader::optional_duration(const std::string& key) const {
  return optional_unit<std::chrono::nanoseconds>(*this, key, parse_duration);
}

Result<std::string> JsonReader::string(const std::string& key) const {
  return required(*this, key, optional_string(key), "a string");
}
Result<double> JsonReader::number(const std::string& key) const {
  return required(*this, key, optional_number(key), "a number");
}
Result<std::int64_t> JsonReader::integer(const std::string& key) const {
  return required(*this, key, optional_integer(key), "a whole number");
}
Result<double> JsonReader::rate_bps(const std::string& key) const {
  return required(*this, key, optional_rate_bps(key), "a rate like \"500Mbit\"");
}
Result<std::chrono::nanoseconds> JsonReader::duration(const std::string& key) const {
  return required(*this, key, optional_duration(key), "a duration like \"250ms\"");
}

Result<std::string> read_json_text(const std::string& path, const std::string& what) {
  auto text = read_file(path, kMaxJsonBytes);
  struct stat st {};
  const bool folder = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (!text && text.error().code == Errc::kInvalidArgument && !folder) {
    return make_error(Errc::kInvalidArgument,
                      path + ": more than " + format_size(kMaxJsonBytes) + ", the most " + what + " may hold");
  }
  return text;
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  auto text = read_json_text(path, "a JSON file");
  if (!text) {
    return text.error();
  }
  return parse_json(*text, path);
}

}  // namespace contend

namespace contend {

Result<nlohmann::json> parse_document(const std::string& text, const std::string& source, const std::string& kind,
                                      int version, std::initializer_list<const char*> keys, const JsonLimits& limits) {
  auto json = parse_json(text, source, limits);
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  std::vector<std::string> allowed = {"schema"};
  allowed.insert(allowed.end(), keys.begin(), keys.end());
  if (auto ok = r.check_keys(allowed); !ok) {
    return ok.error();
  }
  if (auto ok = r.expect_schema(kind, version); !ok) {
    return ok.error();
  }
  return json;
}

Result<void> read_count(const JsonReader& r, const std::string& key, long long lo, long long hi, int& out) {
  auto v = r.optional_integer(key);
  if (!v) {
    return v.error();
  }
  if (*v) {
    if (**v < lo || **v > hi) {
      return r.error_at(
          key, "expected " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + std::to_string(**v));
    }
    out = static_cast<int>(**v);
  }
  return {};
}

}  // namespace contend
