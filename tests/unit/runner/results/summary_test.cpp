#include "contend/runner/results/summary.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("throughput statistics: median, mean, sample stdev and the t interval", "[runner]") {
  const Stats s = stats_of({10, 12, 14});
  CHECK(s.n == 3);
  CHECK(s.median == 12);
  CHECK(s.mean == 12);
  CHECK(s.stdev == Approx(2));
  CHECK(s.ci95 == Approx(4.303 * 2 / std::sqrt(3.0)));
  CHECK(stats_of({5}).ci95 == 0);
  CHECK(stats_of({1, 2, 3, 4}).median == 2.5);
}

TEST_CASE("summaries give speedups over the baseline and compare by speedup", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  auto ref = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 100}}, {{"s", "kfkb:k=2"}, {120, 120}}});
  CHECK(ref.cells[1].speedup == Approx(1.2));
  CHECK(ref.cells[0].speedup == Approx(1.0));
  // Twice as fast a machine, same ratio: no regression.
  auto fast = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {200, 200}}, {{"s", "kfkb:k=2"}, {240, 240}}});
  CHECK(compare(fast, ref, 0.05).empty());
  // kFkB lost its edge: a regression naming the cell.
  auto slow = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 100}}, {{"s", "kfkb:k=2"}, {105, 105}}});
  auto r = compare(slow, ref, 0.05);
  REQUIRE(r.size() == 1);
  CHECK(r[0].schedule == "kfkb:k=2");
  CHECK_THAT(r[0].what, Catch::Contains("12.5%"));
  CHECK_THAT(regression_table(r), Catch::Contains("kfkb:k=2"));
  auto json = summary_json(ref);
  CHECK(json["schema"] == "contend.summary/1");
  CHECK(json["cells"][1]["throughput"]["median"] == 120.0);
  CHECK(json["cells"][1]["speedup"]["median"] == Approx(1.2));
  CHECK_THAT(summary_csv(ref), Catch::StartsWith("scenario,schedule,repetitions,throughput_median"));
}

TEST_CASE("a cell of one repetition shows no interval in the table, not a zero one", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  const std::string one =
      summary_table(summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100}}, {{"s", "kfkb:k=2"}, {120}}}));
  CHECK_THAT(one, Catch::Contains("1.200") && !Catch::Contains("+/-0") && !Catch::Contains(" 0.0"));
  const std::string two = summary_table(
      summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 102}}, {{"s", "kfkb:k=2"}, {120, 118}}}));
  CHECK_THAT(two, Catch::Contains(" +/-0."));  // the speedup's interval
}

TEST_CASE("cells that never ran show no numbers, not zeros, and are missing to a comparison", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  auto stopped = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 101}}});
  const std::string table = summary_table(stopped);
  CHECK_THAT(table, Catch::Contains("not run"));
  CHECK_THAT(table, !Catch::Contains("0.000"));
  CHECK_THAT(summary_csv(stopped), Catch::Contains("s,kfkb:k=2,0,,,,,,"));
  auto ref = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100}}, {{"s", "kfkb:k=2"}, {120}}});
  auto r = compare(stopped, ref, 0.03);
  REQUIRE(r.size() == 1);
  CHECK(r[0].what == "missing");
  auto simulated = ref;
  simulated.mode = "simulated";
  CHECK_THAT(check_comparable(stopped, simulated, "ref.json").error().message, Catch::Contains("simulated run"));
  auto other = ref;
  other.experiment = "paper";
  CHECK_THAT(check_comparable(stopped, other, "ref.json").error().message, Catch::Contains("experiment \"paper\""));
}
