// What every JSON file contend reads is held to (common/json.h): size, depth and value count
// checked before anything is built, duplicate keys and NUL characters refused, and errors that
// quote a short prefix of a bad value, never all of it.

#include <catch2/catch.hpp>
#include <string>

#include "contend/common/json.h"
#include "contend/common/json_reader.h"

using namespace contend;

namespace {
std::string json_error_of(const std::string& text) {
  auto j = parse_json(text, "f.json");
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code == Errc::kParse);
  return j.error().message;
}
}  // namespace

TEST_CASE("a JSON text deeper, larger or fuller than the limits is refused before it is built", "[json]") {
  // 100000 nested arrays: the parser would recurse (and dump() did) until the stack ran out.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THAT(json_error_of(deep), Catch::Contains("nested more than 32 deep"));
  const std::string ok_depth = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  CHECK(parse_json(ok_depth, "f.json").ok());
  CHECK_THAT(json_error_of(std::string(kMaxJsonBytes + 1, ' ')),
             Catch::Contains("more than the 4194304 a file may hold"));
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxJsonValues; ++i) {
    many += "0,";
  }
  many += "0]";
  if (many.size() <= kMaxJsonBytes) {
    CHECK_THAT(json_error_of(many), Catch::Contains("more than 1048576 values"));
  }
}

TEST_CASE("a key twice in one object and a NUL character are errors, not the last one winning", "[json]") {
  CHECK_THAT(json_error_of(R"({"repetitions": 3, "repetitions": 1})"),
             Catch::Contains("the key \"repetitions\" appears twice in one object"));
  CHECK(parse_json(R"({"a": {"k": 1}, "b": {"k": 2}})", "f.json").ok());  // the same key in two objects
  CHECK_THAT(json_error_of(R"({"scenarios": ["steady.json\u0000-x"]})"), Catch::Contains("NUL character"));
  CHECK_THAT(json_error_of(R"({"a\u0000": 1})"), Catch::Contains("a key holds a NUL character"));
  CHECK_THAT(json_error_of("{\"a\": 1,}"), Catch::StartsWith("f.json: "));
}

TEST_CASE("errors quote a short prefix of a bad value", "[json]") {
  const std::string big(100000, 'x');
  auto j = parse_json(R"({"name": [")" + big + R"("], "n": 18446744073709551615})", "f.json");
  REQUIRE(j.ok());
  const JsonReader r(*j, "f.json");
  auto name = r.string("name");
  REQUIRE_FALSE(name.ok());
  CHECK(name.error().message.size() < 200);
  CHECK_THAT(name.error().message, Catch::Contains("expected a string, got array [\"xxx"));
  // Past 2^63: an error that says so, not a negative number.
  auto n = r.integer("n");
  REQUIRE_FALSE(n.ok());
  CHECK_THAT(n.error().message, Catch::Contains("below 2^63, got 18446744073709551615"));
  CHECK(excerpt(big).size() < 100);
  CHECK(excerpt("short") == "short");
}

TEST_CASE("a path is valid UTF-8 or it is not, as the JSON writer sees it", "[json]") {
  CHECK(valid_utf8("results/quickstart-2026"));
  CHECK(valid_utf8("r\xC3\xA9sultats"));
  CHECK_FALSE(valid_utf8("out\xFF"));
  CHECK_FALSE(valid_utf8("\xC3"));  // cut inside a character
}
