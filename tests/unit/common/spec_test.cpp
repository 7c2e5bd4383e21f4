// The spec grammar's list of whole numbers (ParamType::kIntegerList, "0/2/1/0"), on an entry of its
// own so the tests do not depend on any registry's table.
#include <catch2/catch.hpp>

#include "contend/common/spec.h"

using namespace contend;

namespace {

// "demo:extra=N/N/...[,k=N]": a list of at most 4 entries from 0 to 8, then an integer.
const SpecEntry& demo() {
  static const SpecEntry kEntry{"thing",
                                "demo",
                                "a list first, then an integer",
                                {ParamDef::integer_list("extra", "one entry per rank", "", 0, 8, 4),
                                 ParamDef::integer("k", "group size", "1", 1)}};
  return kEntry;
}

Result<Spec> parse(const std::string& text) {
  return parse_spec(text, {&demo()}, "thing");
}

std::string spec_error_of(const std::string& text) {
  auto spec = parse(text);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.error().code == Errc::kInvalidArgument);
  return spec.error().message;
}

}  // namespace

TEST_CASE("a list parameter reads '/'-separated whole numbers, by key or as the first value", "[spec]") {
  auto keyed = parse("demo:extra=0/2/1/0,k=3");
  REQUIRE(keyed.ok());
  CHECK(keyed->integers("extra") == std::vector<std::int64_t>{0, 2, 1, 0});
  CHECK(keyed->integer("k") == 3);
  auto bare = parse("demo:0/2/1/0");
  REQUIRE(bare.ok());
  CHECK(bare->integers("extra") == std::vector<std::int64_t>{0, 2, 1, 0});
  CHECK(parse("demo:extra=7")->integers("extra") == std::vector<std::int64_t>{7});
}

TEST_CASE("a list parameter not written is its default, the empty list", "[spec]") {
  auto spec = parse("demo:k=2");
  REQUIRE(spec.ok());
  CHECK_FALSE(spec->given("extra"));
  CHECK(spec->integers("extra").empty());
  CHECK(spec->str() == "demo:k=2");
}

TEST_CASE("a list's canonical text writes each entry as a plain decimal and parses back to itself", "[spec]") {
  CHECK(parse("demo:0/2/1/0")->str() == "demo:extra=0/2/1/0");
  CHECK(parse("demo:k=2,extra=08/0")->str() == "demo:extra=8/0,k=2");  // declaration order
  CHECK(parse("demo:08/0").value() == parse("demo:extra=8/0").value());
  for (const char* text : {"demo:0/2/1/0", "demo:extra=3,k=2", "demo:k=4"}) {
    const Spec spec = parse(text).value();
    CHECK(parse(spec.str()).value() == spec);
    CHECK(parse(spec.str())->integers("extra") == spec.integers("extra"));
  }
}

TEST_CASE("a list is declared in the syntax as N/N/...", "[spec]") {
  CHECK(syntax(demo()) == "demo[:extra=N/N/...,k=N]");
  const SpecEntry required{"thing", "req", "", {ParamDef::integer_list("extra", "", std::nullopt, 0, 8, 4)}};
  CHECK(syntax(required) == "req:extra=N/N/...");
  CHECK_THAT(parse_spec("req", {&required}, "thing").error().message, Catch::Contains("missing parameter extra"));
}

TEST_CASE("a malformed list is refused naming the entry and what an entry may be", "[spec]") {
  const std::string expected = "expected '/'-separated entries, each a whole number from 0 to 8";
  CHECK(spec_error_of("demo:extra=") == "thing \"demo:extra=\": extra: " + expected + ", got \"\"");
  CHECK(spec_error_of("demo:0//1") == "thing \"demo:0//1\": extra: entry 2 is empty; " + expected);
  CHECK_THAT(spec_error_of("demo:0/1/"), Catch::Contains("extra: entry 3 is empty"));
  CHECK_THAT(spec_error_of("demo:/1"), Catch::Contains("extra: entry 1 is empty"));
  CHECK_THAT(spec_error_of("demo:0/-1"), Catch::Contains("extra: entry 2 is \"-1\"; " + expected));
  CHECK_THAT(spec_error_of("demo:+1"), Catch::Contains("extra: entry 1 is \"+1\""));
  CHECK_THAT(spec_error_of("demo:0/ 1"), Catch::Contains("extra: entry 2 is \" 1\""));
  CHECK_THAT(spec_error_of("demo:1 "), Catch::Contains("extra: entry 1 is \"1 \""));
  CHECK_THAT(spec_error_of("demo:1.5"), Catch::Contains("entry 1 is \"1.5\""));
  CHECK_THAT(spec_error_of("demo:1e3"), Catch::Contains("entry 1 is \"1e3\""));
  CHECK_THAT(spec_error_of("demo:0x1"), Catch::Contains("entry 1 is \"0x1\""));
  CHECK_THAT(spec_error_of("demo:1;2"), Catch::Contains("entry 1 is \"1;2\""));
}

TEST_CASE("a list's entries must be within bounds, and there may be at most max_entries of them", "[spec]") {
  CHECK(parse("demo:8/8/8/8").ok());
  CHECK_THAT(spec_error_of("demo:0/9"), Catch::Contains("extra: entry 2 is \"9\"; expected '/'-separated entries, "
                                                        "each a whole number from 0 to 8"));
  CHECK_THAT(spec_error_of("demo:99999999999999999999999"), Catch::Contains("entry 1 is \"99999999999999999999999\""));
  CHECK(spec_error_of("demo:0/0/0/0/0") == "thing \"demo:0/0/0/0/0\": extra: 5 entries; expected at most 4");
  CHECK_THAT(spec_error_of("demo:extra=1,extra=2"), Catch::Contains("extra is given twice"));
}
