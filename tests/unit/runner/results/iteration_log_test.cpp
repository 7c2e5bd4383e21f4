#include "contend/runner/results/iteration_log.h"

#include <catch2/catch.hpp>

#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using contend::test::TempFile;

TEST_CASE("the iteration log is read once: every rank's records, the runtime's timings, lines cut short passed over",
          "[runner]") {
  const TempFile file(
      R"({"rank": 0, "iteration": 0, "start_s": 10, "iteration_s": 1, "forward_s": 0.1, "backward_s": 0.2, "send_wait_s": 0.01, "flush_s": 0, "step_s": 0, "sends": 4}
{"rank": 1, "iteration": 0, "start_s": 10.01, "iteration_s": 0.99}
not json at all
{"schema": "contend.iteration/1"}
{"rank": 0, "iteration": 1, "start_s": 11, "iteration_s": 1.5}
{"rank": 1, "iteration": 1, "start_s": 11.0, "iteration_s": 1.4, "sends": 4}
{"rank": 0, "iteration": 2, "sta)");
  auto log = read_iteration_log(file.name);
  REQUIRE(log.ok());
  REQUIRE(log->lines.size() == 4);  // the cut line, the plain text and the line without a rank are not records
  CHECK(log->lines[0].timings.has_value());
  CHECK(log->lines[0].timings->backward_s == Approx(0.2));
  CHECK_FALSE(log->lines[1].timings.has_value());
  CHECK(log->lines[3].partial_timings);  // "sends" without the other timings: the calibration refuses it
  CHECK(log->lines[3].number == 6);
  auto rank0 = log->rank0(1);
  REQUIRE(rank0.ok());
  REQUIRE(rank0->size() == 1);
  CHECK((*rank0)[0] == std::pair<double, double>(11, 1.5));
  CHECK(read_iteration_log("/nonexistent/contend.jsonl").error().code == Errc::kNotFound);
}

TEST_CASE("rank 0's line without its numbers is refused by what counts it, naming the line", "[runner]") {
  const TempFile file(R"({"rank": 0, "iteration": 0, "start_s": 10, "iteration_s": 1}
{"rank": 0, "iteration": 1.5, "start_s": 11, "iteration_s": 1}
)");
  auto log = read_iteration_log(file.name);
  REQUIRE(log.ok());  // read whole: the reader keeps what it found
  auto rank0 = log->rank0(0);
  REQUIRE_FALSE(rank0.ok());
  CHECK_THAT(rank0.error().message, Catch::Contains(std::string(file.name) + ":2"));
}
