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
    // "[json.exception.parse_error.101] parse error at line 1, column 68: ..." without the
    // library's own tag: the rest says where and what.
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    // nlohmann quotes the last bytes it read ("last read: '...'"): a file that is not JSON (a
    // password file named by mistake) must not be echoed.
    if (const auto quoted = what.find("; last read: "); quoted != std::string::npos) {
      const auto rest = what.find(';', quoted + 2);
      what.erase(quoted, rest == std::string::npos ? std::string::npos : rest - quoted);
    }
    return make_error(Errc::kParse, source + ": " + what);
  }
}

}  // namespace contend
