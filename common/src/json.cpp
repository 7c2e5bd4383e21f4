#include "contend/common/json.h"

namespace contend {

nlohmann::ordered_json json_document(const std::string& kind, int version) {
  nlohmann::ordered_json doc;
  doc["schema"] = "contend." + kind + "/" + std::to_string(version);
  return doc;
}

Result<nlohmann::json> parse_json(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(Errc::kParse, source + ": " + e.what());
  }
}

}  // namespace contend
