#include "contend/runner/regression/ci_reports.h"

#include <catch2/catch.hpp>

using namespace contend::runner;

namespace {

Summary run_of(double kfkb_level) {
  return summarize("exp<&>", "1f1b", "real", {{"s", "1f1b"}, {"s", "kfkb"}},
                   {{{"s", "1f1b"}, {100, 101, 99, 100, 102}},
                    {{"s", "kfkb"}, {kfkb_level, kfkb_level + 1, kfkb_level - 1, kfkb_level, kfkb_level + 0.5}}});
}

std::string report(const std::vector<CiReport>& all, const std::string& file) {
  for (const CiReport& r : all) {
    if (r.file == file) {
      return r.content;
    }
  }
  FAIL("no " << file);
  return "";
}

}  // namespace

TEST_CASE("CI reports of a comparison: JUnit failures carry the numbers, Markdown and benchmark JSON", "[regression]") {
  const Summary ref = run_of(120);
  const Summary now = run_of(110);
  VerdictOptions o;
  const auto v = verdicts(now, ref, o);
  const CiReportInput in{&now, &v, nullptr, o, "ref/summary.json"};
  const auto all = render_ci_reports(in);
  const std::string junit = report(all, "junit.xml");
  CHECK_THAT(junit, Catch::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  CHECK_THAT(junit, Catch::Contains("tests=\"2\" failures=\"1\""));
  CHECK_THAT(junit, Catch::Contains("<testsuite name=\"exp&lt;&amp;&gt;\""));  // escaped
  CHECK_THAT(junit, Catch::Contains("<failure type=\"regression\" message=\"slower: slower by 8."));
  CHECK_THAT(junit, Catch::Contains("reference median 120"));
  const std::string md = report(all, "summary.md");
  CHECK_THAT(md, Catch::Contains("**1 of 2 cells regressed**"));
  CHECK_THAT(md, Catch::Contains("| scenario | schedule | reference | now |"));
  // github-action-benchmark's customBiggerIsBetter: a list of {name, unit, value, range}.
  const auto bench = nlohmann::json::parse(report(all, "benchmark.json"));
  REQUIRE(bench.is_array());
  REQUIRE(bench.size() == 2);
  CHECK(bench[1]["name"] == "exp<&>/s/kfkb");
  CHECK(bench[1]["unit"] == "samples/s");
  CHECK(bench[1]["value"].get<double>() == Approx(110));
  CHECK(bench[1]["range"].is_string());
  // Bencher Metric Format: name -> measure -> value, lower_value <= value <= upper_value.
  const auto bmf = nlohmann::json::parse(report(all, "bmf.json"));
  const auto& m = bmf["exp<&>/s/kfkb"]["throughput"];
  CHECK(m["value"].get<double>() == Approx(110));
  CHECK(m["lower_value"].get<double>() <= m["value"].get<double>());
  CHECK(m["upper_value"].get<double>() >= m["value"].get<double>());
}

TEST_CASE("an unresolved cell is a skipped test case, not a pass", "[regression]") {
  const Summary ref = summarize("e", "1f1b", "real", {{"s", "1f1b"}}, {{{"s", "1f1b"}, {100, 101, 99}}});
  const Summary now = summarize("e", "1f1b", "real", {{"s", "1f1b"}}, {{{"s", "1f1b"}, {90, 91, 89}}});
  const auto v = verdicts(now, ref, {});
  const CiReportInput in{&now, &v, nullptr, {}, "ref"};
  const std::string junit = render_ci_reports(in)[0].content;
  CHECK_THAT(junit, Catch::Contains("skipped=\"1\"") && Catch::Contains("<skipped>unresolved: 3 and 3 repetitions"));
}
