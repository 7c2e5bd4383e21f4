#include "contend/runner/regression/history.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "contend/runner/regression/ci_reports.h"

using namespace contend::runner;
namespace fs = std::filesystem;

namespace {

struct Runs {
  std::string dir;
  Runs() {
    char name[] = "/tmp/contend-history-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    dir = name;
  }
  ~Runs() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // A results folder: env.json (commit, machine, start) and a summary of two cells.
  std::string add(const std::string& name, double level, const std::string& started, const std::string& host = "vm",
                  const std::string& experiment = "e") {
    const std::string run = dir + "/" + name;
    fs::create_directories(run);
    nlohmann::ordered_json env = {{"schema", "contend.env/1"}, {"experiment", experiment},
                                  {"git_commit", name},        {"host", host},
                                  {"cpu_model", "CPU X"},      {"cpus", 2},
                                  {"files_fingerprint", "f"},  {"started", started}};
    std::ofstream(run + "/env.json") << env.dump();
    const std::vector<double> reps = {level, level * 1.001, level * 0.999, level * 1.002, level * 0.998};
    std::vector<double> base;
    for (double v : reps) {
      base.push_back(v / 1.2);
    }
    const Summary s = summarize(experiment, "1f1b", "real", {{"s", "1f1b"}, {"s", "kfkb"}},
                                {{{"s", "1f1b"}, base}, {{"s", "kfkb"}, reps}});
    std::ofstream(run + "/summary.json") << summary_json(s).dump();
    return run;
  }
};

}  // namespace

TEST_CASE("a history: runs in the order they started, a 3% step found at its commit", "[regression]") {
  Runs r;
  for (int i = 0; i < 30; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "c%02d", 29 - i);  // names against the start order
    const double noise = 1 + 0.004 * ((i * 7) % 5 - 2) / 2;
    r.add(name, (i >= 20 ? 97.0 : 100.0) * noise,
          "2026120" + std::to_string(1 + i / 10) + "-" + std::to_string(100 + i));
  }
  auto runs = read_runs({r.dir});
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 30);
  CHECK(runs->front().commit == "c29");  // the first to start
  auto one = one_history(std::move(*runs), "");
  REQUIRE(one.ok());
  const History h = history_of(std::move(*one), Quantity::kThroughput, 0.02);
  REQUIRE(h.cells.size() == 2);
  const CellSeries& kfkb = h.cells[1];
  REQUIRE(kfkb.changes.size() == 1);
  CHECK(kfkb.changes[0].index == 20);
  CHECK(h.runs[kfkb.runs[20]].commit == "c09");
  CHECK(ends_in_loss(kfkb));
  CHECK_THAT(history_table(h), Catch::Contains("commit c09") && Catch::Contains("-3.0%"));
  // By speedup the step is gone: both schedules fell alike.
  auto again = one_history(*read_runs({r.dir}), "");
  CHECK(history_of(std::move(*again), Quantity::kSpeedup, 0.02).cells[1].changes.empty());
  // The reports of a history: each loss a failing test case naming the commit (both schedules fell).
  const CiReportInput in{&h.runs.back().summary, nullptr, &h, {}, "the history"};
  const auto reports = render_ci_reports(in);
  REQUIRE(reports.size() == 4);
  CHECK_THAT(reports[0].content, Catch::Contains("failures=\"2\"") && Catch::Contains("since commit c09"));
  CHECK_THAT(reports[1].content, Catch::Contains("2 of 2 cells regressed"));
}

TEST_CASE("bad histories are refused, each with a clear message", "[regression]") {
  Runs r;
  r.add("a", 100, "1");
  SECTION("one run only") {
    auto one = one_history(*read_runs({r.dir}), "");
    REQUIRE_FALSE(one.ok());
    CHECK_THAT(one.error().message, Catch::Contains("at least two runs"));
  }
  SECTION("a run cut short: no summary") {
    fs::remove(r.add("b", 100, "2") + "/summary.json");
    auto runs = read_runs({r.dir});
    REQUIRE_FALSE(runs.ok());
    CHECK_THAT(runs.error().message, Catch::Contains("b has no summary.json") && Catch::Contains("--resume"));
  }
  SECTION("a truncated summary") {
    const std::string b = r.add("b", 100, "2");
    fs::resize_file(b + "/summary.json", 200);
    auto runs = read_runs({r.dir});
    REQUIRE_FALSE(runs.ok());
    CHECK_THAT(runs.error().message, Catch::Contains(b + "/summary.json"));
  }
  SECTION("two machines mixed, then one picked") {
    r.add("b", 100, "2", "other");
    r.add("c", 100, "3");
    auto mixed = one_history(*read_runs({r.dir}), "");
    REQUIRE_FALSE(mixed.ok());
    CHECK_THAT(mixed.error().message, Catch::Contains("machines") &&
                                          Catch::Contains("\"other / CPU X / 2 CPUs\" (1 runs") &&
                                          Catch::Contains("--machine"));
    auto picked = one_history(*read_runs({r.dir}), "vm / CPU X / 2 CPUs");
    REQUIRE(picked.ok());
    CHECK(picked->size() == 2);
  }
  SECTION("two experiments mixed") {
    r.add("b", 100, "2", "vm", "other");
    auto mixed = one_history(*read_runs({r.dir}), "");
    REQUIRE_FALSE(mixed.ok());
    CHECK_THAT(mixed.error().message, Catch::Contains("experiments"));
  }
  SECTION("a list naming a run that is not there") {
    std::ofstream(r.dir + "/list.txt") << "# runs\na\nmissing\n";
    auto runs = read_runs({r.dir + "/list.txt"});
    REQUIRE_FALSE(runs.ok());
    CHECK_THAT(runs.error().message, Catch::Contains("missing"));
  }
}

TEST_CASE("a list of runs is read in its order, relative to its folder", "[regression]") {
  Runs r;
  r.add("a", 100, "2");
  r.add("b", 101, "1");
  std::ofstream(r.dir + "/list.txt") << "a  # first\n\nb\n";
  auto runs = read_runs({r.dir + "/list.txt"});
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  CHECK((*runs)[0].commit == "a");
  CHECK((*runs)[1].machine == "vm / CPU X / 2 CPUs");
}
