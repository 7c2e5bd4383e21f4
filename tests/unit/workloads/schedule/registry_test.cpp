#include <algorithm>
#include <catch2/catch.hpp>

#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"

using namespace contend;
using namespace contend::schedule;

TEST_CASE("the registry builds every generator by name", "[registry]") {
  CHECK(*make_schedule("1f1b", 4, 8) == one_f_one_b(4, 8));
  CHECK(*make_schedule("gpipe", 4, 8) == gpipe(4, 8));
  CHECK(*make_schedule("kfkb:k=2", 4, 8) == kfkb(4, 8, 2));
  CHECK(*make_schedule("kfkb:3", 4, 8) == kfkb(4, 8, 3));
  CHECK(*make_schedule("interleaved:v=3", 4, 8) == *interleaved_1f1b(4, 8, 3));
  CHECK(make_schedule("interleaved", 4, 8)->num_stages == 8);  // v defaults to 2
  for (const SpecEntry* e : schedule_entries()) {
    CHECK(e->kind == "schedule");
    CHECK(parse_schedule(e->name).ok() ==
          std::none_of(e->params.begin(), e->params.end(), [](const ParamDef& d) { return !d.fallback.has_value(); }));
  }
}

TEST_CASE("schedule specs have one canonical text, so experiments compare them as values", "[registry]") {
  CHECK(parse_schedule("kfkb:2")->str() == "kfkb:k=2");
  CHECK(parse_schedule("kfkb:k=2").value() == parse_schedule("kfkb:2").value());
  CHECK(parse_schedule("interleaved")->str() == "interleaved");  // defaults are not written out
  CHECK(parse_schedule("interleaved:v=2")->str() == "interleaved:v=2");
  CHECK(parse_schedule("1f1b")->kind() == "schedule");
}

TEST_CASE("bad schedule specs say what is allowed", "[registry]") {
  const auto err = [](const char* spec, int p = 4, int m = 8) { return make_schedule(spec, p, m).error().message; };
  CHECK_THAT(err("zigzag"), Catch::Contains("unknown schedule") && Catch::Contains("kfkb:k=N"));
  CHECK_THAT(err("kfkb"), Catch::Contains("missing parameter k"));
  CHECK_THAT(err("kfkb:k=0"), Catch::Contains("expected a whole number >= 1, got \"0\""));
  CHECK_THAT(err("kfkb:k=two"), Catch::Contains("got \"two\""));
  CHECK_THAT(err("kfkb:j=2"), Catch::Contains("unknown parameter \"j\""));
  CHECK_THAT(err("kfkb:k=2,k=3"), Catch::Contains("k is given twice"));
  CHECK_THAT(err("kfkb:k=2.5"), Catch::Contains("whole number"));
  CHECK_THAT(err("kfkb:k=1e3"), Catch::Contains("whole number"));
  CHECK_THAT(err("kfkb:k="), Catch::Contains("got \"\""));
  CHECK_THAT(err("kfkb:=2"), Catch::Contains("expected key=value"));
  CHECK_THAT(err("kfkb:2,3"), Catch::Contains("expected key=value"));
  CHECK_THAT(err("1f1b:k=2"), Catch::Contains("takes no parameters"));
  CHECK_THAT(err("interleaved:v=2", 4, 6), Catch::Contains("multiple of the number of ranks"));
  CHECK_THAT(err("interleaved:v=1"), Catch::Contains("v: expected a whole number from 2 to 64, got \"1\""));
  CHECK_THAT(err("1f1b", 0, 8), Catch::Contains("stages: expected 1 to 1024, got 0"));
  CHECK_THAT(err("1f1b", 4, 1000000000), Catch::Contains("micro-batches: expected 1 to 65536"));
  CHECK_THAT(err("gpipe", 1024, 65536), Catch::Contains("more than the"));
  CHECK_THAT(err("interleaved:v=65"), Catch::Contains("v: expected a whole number from 2 to 64"));
  CHECK_THAT(err("interleaved:v=64", 1024, 1024), Catch::Contains("chunks"));
  CHECK(make_schedule("zigzag", 4, 8).error().code == Errc::kInvalidArgument);
}

TEST_CASE("the registry builds the interleaved, zero-bubble and V schedules by name", "[registry]") {
  CHECK(*make_schedule("interleaved:v=2,group=5", 4, 10) == *interleaved_1f1b(4, 10, 2, 5));
  CHECK(parse_schedule("interleaved:group=4")->str() == "interleaved:group=4");
  CHECK(*make_schedule("looped-bfs", 4, 8) == looped_bfs(4, 8, 2));
  CHECK(*make_schedule("looped-bfs:v=3", 4, 8) == looped_bfs(4, 8, 3));
  CHECK(*make_schedule("zb", 4, 8) == *interleaved_zero_bubble(4, 8, 1));
  CHECK(*make_schedule("zb:v=2", 4, 8) == *interleaved_zero_bubble(4, 8, 2));
  CHECK(*make_schedule("zbv", 4, 8) == zbv(4, 8));
  CHECK(*make_schedule("dualpipev", 4, 8) == *dualpipev(4, 8));
  CHECK(group_size(*parse_schedule("zbv"), 8) == 0);
}

TEST_CASE("refused zoo shapes quote the spec and name the constraint", "[registry]") {
  const auto err = [](const char* spec, int p, int m) { return make_schedule(spec, p, m).error().message; };
  CHECK_THAT(err("interleaved:group=3", 4, 8), Catch::StartsWith("schedule \"interleaved:group=3\": ") &&
                                                   Catch::Contains("at least the number of ranks"));
  CHECK_THAT(err("zb:v=2", 4, 9), Catch::Contains("multiple of max(1, floor(m / p)) = 2"));
  CHECK_THAT(err("dualpipev", 4, 6), Catch::StartsWith("schedule \"dualpipev\": ") && Catch::Contains("got 6"));
  CHECK_THAT(err("zb:v=0", 4, 8), Catch::Contains("v: expected a whole number from 1 to 64"));
  CHECK_THAT(err("zbv:v=2", 4, 8), Catch::Contains("takes no parameters"));
  CHECK_THAT(err("looped-bfs:v=64", 1024, 1024), Catch::Contains("chunks"));
}
