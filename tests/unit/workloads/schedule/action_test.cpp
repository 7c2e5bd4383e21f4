#include <catch2/catch.hpp>

#include "contend/schedule/action.h"

using namespace contend;
using namespace contend::schedule;

TEST_CASE("actions print and parse in PyTorch's grammar", "[action]") {
  for (const char* text : {"0F3", "2B1", "1SEND_F3", "1RECV_B2", "12RECV_F103", "3SEND_B0"}) {
    auto a = parse_action(text);
    REQUIRE(a.ok());
    CHECK(to_string(*a) == text);
  }
  auto a = parse_action("1SEND_F3");
  CHECK(a->stage == 1);
  CHECK(a->op == Op::kSendF);
  CHECK(a->microbatch == 3);
}

TEST_CASE("the split backward's I and W parse, PyTorch's sharding actions are refused by name", "[action]") {
  CHECK(parse_action("0I1")->op == Op::kBackwardInput);
  CHECK(parse_action("2W3")->op == Op::kBackwardWeight);
  CHECK(to_string(*parse_action("2W3")) == "2W3");
  for (const char* text : {"0UNSHARD0", "1RESHARD2"}) {
    auto a = parse_action(text);
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().code == Errc::kUnsupported);
    CHECK_THAT(a.error().message, Catch::Contains("not contend's"));
  }
}

TEST_CASE("malformed actions are parse errors quoting the text", "[action]") {
  for (const char* text : {"", "F3", "0F", "0X3", "0f3", "0F3x", "-1F3", "0SEND3"}) {
    INFO(text);
    auto a = parse_action(text);
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().code == Errc::kParse);
    CHECK_THAT(a.error().message, Catch::Contains(std::string("got \"") + text + "\""));
  }
}

TEST_CASE("PyTorch's data-parallel gradient reduction is refused by name, as FSDP's actions are", "[action]") {
  auto a = parse_action("0REDUCE_GRAD");
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().code == Errc::kUnsupported);
  CHECK_THAT(a.error().message, Catch::Contains("REDUCE_GRAD is PyTorch's"));
}
