#include "contend/common/json.h"

#include <set>
#include <vector>

namespace contend {
namespace {

// nlohmann's message without its tag ("[json.exception.parse_error.101] ") or its quotation of
// the last bytes read ("; last read: '...'"): a file that is not JSON (a password file named by
// mistake) must not be echoed.
std::string plain(std::string what) {
  if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
    what = what.substr(what.find("] ") + 2);
  }
  if (const auto quoted = what.find("; last read: "); quoted != std::string::npos) {
    const auto rest = what.find(';', quoted + 2);
    what.erase(quoted, rest == std::string::npos ? std::string::npos : rest - quoted);
  }
  return what;
}

// A first pass over the text that builds nothing: the limits, duplicate keys and NUL characters.
class Checker : public nlohmann::json::json_sax_t {
 public:
  explicit Checker(const JsonLimits& limits) : limits_(limits) {}
  std::string problem;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& s) override { return text(s, "a string") && value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return open() && value();
  }
  bool key(string_t& k) override {
    if (!text(k, "a key")) {
      return false;
    }
    if (!keys_.back().insert(k).second) {
      return fail("the key \"" + excerpt(k) + "\" appears twice in one object");
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return open() && value(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail(plain(e.what()));
  }

 private:
  bool fail(std::string what) {
    problem = std::move(what);
    return false;
  }
  bool value() {
    return ++values_ <= limits_.values ||
           fail("more than " + std::to_string(limits_.values) + " values, the most a file may hold");
  }
  bool open() {
    return ++depth_ <= limits_.depth ||
           fail("arrays and objects nested more than " + std::to_string(limits_.depth) + " deep, the most a file may");
  }
  bool text(const std::string& s, const char* what) {
    return s.find('\0') == std::string::npos || fail(std::string(what) + " holds a NUL character (\\u0000)");
  }

  JsonLimits limits_;
  std::vector<std::set<std::string>> keys_;
  int depth_ = 0;
  std::size_t values_ = 0;
};

}  // namespace

nlohmann::ordered_json json_document(const std::string& kind, int version) {
  nlohmann::ordered_json doc;
  doc["schema"] = "contend." + kind + "/" + std::to_string(version);
  return doc;
}

Result<nlohmann::json> parse_json(const std::string& text, const std::string& source, const JsonLimits& limits) {
  if (text.size() > limits.bytes) {
    return make_error(Errc::kParse, source + ": " + std::to_string(text.size()) + " bytes, more than the " +
                                        std::to_string(limits.bytes) + " a file may hold");
  }
  Checker checker(limits);
  if (!nlohmann::json::sax_parse(text, &checker)) {
    return make_error(Errc::kParse, source + ": " + checker.problem);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(Errc::kParse, source + ": " + plain(e.what()));
  }
}

std::string quote_json(const nlohmann::json& v) {
  return excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool valid_utf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();  // the writer's own check, so the two agree
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace contend
