#include "contend/pipeline/exec/workload.h"

#include <catch2/catch.hpp>

#include "contend/common/json.h"

using namespace contend;
using namespace contend::pipeline;

namespace {
Result<Workload> decode(const std::string& text) {
  auto json = parse_json(text, "w.json");
  REQUIRE(json.ok());
  return parse_workload(JsonReader(*json, "w.json", "/workload"));
}
}  // namespace

TEST_CASE("a workload written by the codec reads back as the same workload", "[workload]") {
  auto w = decode(R"({"stages": 3, "microbatches": 12, "iterations": 7, "warmup": 1, "backend": "cpu",
                      "transport": "tcp:sends=wait", "fwd": "1.5ms", "bwd": "3333us", "activation": "3KiB",
                      "hidden": 32, "layers": 6, "microbatch_size": 2, "seq_len": 8})");
  REQUIRE(w.ok());
  CHECK(w->emulated.backward == std::chrono::microseconds(3333));
  CHECK(w->model.layers == 6);
  const nlohmann::ordered_json written = workload_json(*w);
  CHECK(written.size() == workload_keys().size());  // every member, none left to a default
  auto again = decode(written.dump());
  REQUIRE(again.ok());
  CHECK(*again == *w);
  CHECK(workload_json(*again) == written);
  CHECK(again->runs() == 8);
  CHECK(again->samples_per_iteration() == 24);
  // A duration with nanoseconds survives: it is written in ns, not rounded to a readable unit.
  Workload odd = *w;
  odd.emulated.forward = std::chrono::nanoseconds(1234567);
  auto odd_again = decode(workload_json(odd).dump());
  REQUIRE(odd_again.ok());
  CHECK(odd_again->emulated.forward == std::chrono::nanoseconds(1234567));
  CHECK_FALSE(*odd_again == *w);
}

TEST_CASE("a workload decodes from JSON text as from the object", "[workload]") {
  auto w = parse_workload_json(R"({"stages": 3, "fwd": "2ms"})", "--workload");
  REQUIRE(w.ok());
  CHECK(w->emulated.forward == std::chrono::milliseconds(2));
  auto bad = parse_workload_json("{\"stages\": 3,", "--workload");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("--workload"));
}

TEST_CASE("the workload codec refuses what no run could take, naming the key", "[workload]") {
  const auto error_of = [](const std::string& text) {
    auto w = decode(text);
    REQUIRE_FALSE(w.ok());
    return w.error().message;
  };
  CHECK_THAT(error_of(R"({"stages": 1})"), Catch::Contains("/workload/stages"));
  CHECK_THAT(error_of(R"({"fwd": "0ms"})"), Catch::Contains("/workload/fwd"));
  CHECK_THAT(error_of(R"({"activation": "2GiB"})"), Catch::Contains("/workload/activation"));
  CHECK_THAT(error_of(R"({"backend": "tpu"})"), Catch::Contains("/workload/backend"));
  CHECK_THAT(error_of(R"({"speed": 3})"), Catch::Contains("speed"));
  CHECK_THAT(error_of(R"({"backend": "cpu", "stages": 4, "layers": 2})"), Catch::Contains("layer"));
  // Defaults: what an experiment gets when it says nothing.
  auto d = decode("{}");
  REQUIRE(d.ok());
  CHECK(d->stages == 4);
  CHECK(d->backend.str() == "emulated");
  CHECK(d->emulated.forward == std::chrono::milliseconds(10));
  CHECK(d->runs() == 14);
}
