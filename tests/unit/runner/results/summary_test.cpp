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

TEST_CASE("summaries give speedups over the baseline, and read back with their samples", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  auto ref = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 100}}, {{"s", "kfkb:k=2"}, {120, 120}}});
  CHECK(ref.cells[1].speedup == Approx(1.2));
  CHECK(ref.cells[0].speedup == Approx(1.0));
  auto json = summary_json(ref);
  CHECK(json["schema"] == "contend.summary/1");
  CHECK(json["cells"][1]["throughput"]["median"] == 120.0);
  CHECK(json["cells"][1]["speedup"]["median"] == Approx(1.2));
  CHECK_THAT(summary_csv(ref), Catch::StartsWith("scenario,schedule,repetitions,throughput_median"));
}

TEST_CASE("with a baseline scenario each cell says its slowdown against the same schedule there", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {
      {"steady", "1f1b"}, {"steady", "kfkb"}, {"preempted", "1f1b"}, {"preempted", "kfkb"}};
  const std::map<std::pair<std::string, std::string>, std::vector<double>> throughput = {
      {{"steady", "1f1b"}, {100, 102, 98}},
      {{"steady", "kfkb"}, {110, 110, 110}},
      {{"preempted", "1f1b"}, {50, 51, 49}},
      {{"preempted", "kfkb"}, {88}}};
  const Summary s = summarize("e", "1f1b", "real", order, throughput, "steady");
  CHECK(s.cells[0].slowdown == Approx(1.0));
  CHECK(s.cells[2].slowdown == Approx(2.0));  // 100 / 50
  CHECK(s.cells[2].slowdown_ci95 > 0);
  CHECK(s.cells[3].slowdown == Approx(1.25));  // 110 / 88, against kfkb's own steady cell
  CHECK(s.cells[3].slowdown_ci95 == 0);        // one repetition: no interval
  const auto json = summary_json(s);
  CHECK(json["baseline_scenario"] == "steady");
  CHECK(json["cells"][2]["slowdown"]["median"] == Approx(2.0));
  const std::string table = summary_table(s);
  CHECK_THAT(table, Catch::Contains("slowdown vs steady") && Catch::Contains("2.000 +/-"));
  CHECK_THAT(summary_csv(s), Catch::Contains("slowdown_median,slowdown_ci95"));
  const Summary none = summarize("e", "1f1b", "real", order, throughput);
  CHECK_FALSE(summary_json(none).contains("baseline_scenario"));
  CHECK_FALSE(summary_json(none)["cells"][0].contains("slowdown"));
  CHECK_THAT(summary_table(none), !Catch::Contains("slowdown"));
}

TEST_CASE("a cell that recorded its traffic says what it sent over each shaped end", "[runner]") {
  Summary s =
      summarize("e", "1f1b", "real", {{"s", "1f1b"}, {"s", "kfkb"}}, {{{"s", "1f1b"}, {100}}, {{"s", "kfkb"}, {110}}});
  s.cells[0].link_bytes = {{"a-b", "n0", 4096, 4000}, {"a-b", "n1", 0, std::nullopt}};
  const auto json = summary_json(s);
  REQUIRE(json["cells"][0]["link_bytes"].size() == 1);  // an end that sent nothing is left out
  CHECK(json["cells"][0]["link_bytes"][0]["node"] == "n0");
  CHECK(json["cells"][0]["link_bytes"][0]["bytes"] == 4096);
  CHECK(json["cells"][0]["link_bytes"][0]["workload"] == 4000);
  CHECK_FALSE(json["cells"][1].contains("link_bytes"));  // nothing recorded (simulated, cluster hosts)
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

TEST_CASE("cells that never ran show no numbers, not zeros, and a reference must compare", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  auto stopped = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 101}}});
  const std::string table = summary_table(stopped);
  CHECK_THAT(table, Catch::Contains("not run"));
  CHECK_THAT(table, !Catch::Contains("0.000"));
  CHECK_THAT(summary_csv(stopped), Catch::Contains("s,kfkb:k=2,0,,,,,,"));
  auto ref = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100}}, {{"s", "kfkb:k=2"}, {120}}});
  CHECK_THAT(check_comparable(ref, stopped, "ref.json", false).error().message, Catch::Contains("a speedup of 0"));
  CHECK(check_comparable(stopped, ref, "ref.json", true).ok());
  auto simulated = ref;
  simulated.mode = "simulated";
  CHECK_THAT(check_comparable(stopped, simulated, "ref.json", false).error().message, Catch::Contains("simulated run"));
  auto other = ref;
  other.experiment = "paper";
  CHECK_THAT(check_comparable(stopped, other, "ref.json", false).error().message,
             Catch::Contains("experiment \"paper\""));
}

TEST_CASE("a summary reads back with every repetition's throughput, and refuses samples that are not", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}};
  auto json = summary_json(summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 98.5, 101}}}));
  char path[] = "/tmp/contend-summary-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << json.dump();
  auto back = read_summary(path);
  REQUIRE(back.ok());
  CHECK(back->cells[0].throughput == std::vector<double>{100, 98.5, 101});
  json["cells"][0]["throughput"]["samples"][1] = -3;
  std::ofstream(path) << json.dump();
  CHECK_THAT(read_summary(path).error().message, Catch::Contains("samples") && Catch::Contains("-3"));
  json["cells"][0]["throughput"].erase("samples");
  std::ofstream(path) << json.dump();
  CHECK_THAT(read_summary(path).error().message, Catch::Contains("one throughput per repetition"));
  ::unlink(path);
}
