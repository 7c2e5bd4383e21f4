// The other tenants' side of a cell: each tenant's goodput from the player's flow summaries (a
// traffic pattern's flows summed under its name), kept in cells.jsonl, summarized over the
// repetitions into summary.json and a table; a failed flow fails the cell.
#include "results/tenants.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "contend/runner/results/summary.h"
#include "results/results_dir.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

namespace {

std::string flow_summary(const std::string& flow, double bps, const std::string& error = "") {
  return R"({"kind": "flow_summary", "flow": ")" + flow + R"(", "achieved_bps": )" + std::to_string(bps) +
         R"(, "bytes_received": 1000, "active_s": 2.0, "error": ")" + error + "\"}\n";
}

const std::string kStart = R"({"kind": "start", "scenario": "s", "duration_s": 30})"
                           "\n";

}  // namespace

TEST_CASE("a tenant's goodput is the sum of its flows', a flow of no pattern a tenant of its own", "[tenants]") {
  TempFile log(kStart + flow_summary("dp:h0-h4", 190e6) +
               R"({"kind": "end", "t_s": 20})"
               "\n" +
               flow_summary("bulk", 50e6) + flow_summary("dp:h4-h1", 180e6));
  auto tenants = tenant_goodput(log.name);
  REQUIRE(tenants.ok());
  REQUIRE(tenants->size() == 2);
  CHECK(tenants->at(0).tenant == "dp");
  CHECK(tenants->at(0).flows == 2);
  CHECK(tenants->at(0).bps == Approx(370e6));
  CHECK(tenants->at(1).tenant == "bulk");
  CHECK(tenants->at(1).flows == 1);
  TempFile none(kStart);
  REQUIRE(tenant_goodput(none.name).ok());
  CHECK(tenant_goodput(none.name)->empty());
}

TEST_CASE("a failed flow fails the cell naming its tenant, a damaged log its line", "[tenants]") {
  TempFile failed(kStart + flow_summary("dp:h0-h4", 190e6) + flow_summary("dp:h4-h1", 2e6, "send: broken pipe"));
  auto read = tenant_goodput(failed.name);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().code == Errc::kIo);
  CHECK_THAT(read.error().message, Catch::Contains("tenant dp: flow dp:h4-h1 failed: send: broken pipe"));
  TempFile damaged(kStart + R"({"kind": "flow_summary", "flow": "x", "achieved_bps": "fast"})"
                            "\n");
  read = tenant_goodput(damaged.name);
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(read.error().message, Catch::Contains("line 2") && Catch::Contains("achieved_bps"));
  TempFile not_json(kStart + "{not json\n");
  CHECK_THAT(tenant_goodput(not_json.name).error().message, Catch::Contains("line 2"));
  CHECK(tenant_goodput("/nonexistent/events.jsonl").error().code == Errc::kNotFound);
}

TEST_CASE("tenants are kept in cells.jsonl, read back as written, a damaged entry refused", "[tenants]") {
  char dir[] = "/tmp/contend-tenants-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  MeasuredCell cell;
  cell.throughput = 28;
  cell.tenants = {{"dp", 4, 759e6}};
  REQUIRE(record_cell(dir, "a.1f1b.r1", cell, IterationSpread{}).ok());
  auto cells = finished_cells(dir);
  REQUIRE(cells.ok());
  REQUIRE(cells->tenants.count("a.1f1b.r1") == 1);
  CHECK(cells->tenants.at("a.1f1b.r1").at(0).tenant == "dp");
  CHECK(cells->tenants.at("a.1f1b.r1").at(0).flows == 4);
  CHECK(cells->tenants.at("a.1f1b.r1").at(0).bps == 759e6);
  std::ofstream(std::string(dir) + "/cells.jsonl")
      << R"({"id": "a.r1", "throughput": 5, "tenants": [{"tenant": "dp", "flows": 0, "bps": 1}]})"
         "\n";
  auto damaged = finished_cells(dir);
  REQUIRE_FALSE(damaged.ok());
  CHECK_THAT(damaged.error().message, Catch::Contains("cells.jsonl:1") && Catch::Contains("count of flows"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a cell's tenants are summarized over its repetitions into summary.json and a table", "[tenants]") {
  const auto tenants =
      summarize_tenants({{{"dp", 4, 700e6}, {"bulk", 1, 50e6}}, {{"dp", 4, 760e6}}, {{"dp", 4, 740e6}}});
  REQUIRE(tenants.size() == 2);
  CHECK(tenants[0].tenant == "dp");
  CHECK(tenants[0].stats.n == 3);
  CHECK(tenants[0].stats.median == 740e6);
  CHECK(tenants[0].stats.ci95 > 0);
  CHECK(tenants[1].stats.n == 1);
  Summary s = summarize("e", "1f1b", "real", {{"busy", "1f1b"}}, {{{"busy", "1f1b"}, {27.0, 28.0, 29.0}}});
  CHECK(tenants_table(s).empty());
  s.cells[0].tenants = tenants;
  const auto doc = summary_json(s);
  REQUIRE(doc["cells"][0].contains("tenants"));
  CHECK(doc["cells"][0]["tenants"][0]["tenant"] == "dp");
  CHECK(doc["cells"][0]["tenants"][0]["goodput_bps"]["median"] == 740e6);
  CHECK(doc["cells"][0]["tenants"][0]["goodput_bps"]["samples"].size() == 3);
  const std::string table = tenants_table(s);
  CHECK_THAT(table, Catch::Contains("tenant Mbit/s") && Catch::Contains("740.0") && Catch::Contains("bulk"));
}

TEST_CASE("a closed-loop tenant's iterations are read, kept and summarized, and one that ended none fails",
          "[tenants]") {
  const auto iterating = [](const std::string& flow, int iterations, double s) {
    return R"({"kind": "flow_summary", "flow": ")" + flow + R"(", "achieved_bps": 1e8, "error": "", "iterations": )" +
           std::to_string(iterations) + R"(, "iteration_s": )" + std::to_string(s) + "}\n";
  };
  TempFile log(kStart + iterating("dp:h0-h6", 40, 0.45) + iterating("dp:h6-h0", 40, 0.45) + flow_summary("bulk", 5e7));
  auto tenants = tenant_goodput(log.name);
  REQUIRE(tenants.ok());
  REQUIRE(tenants->size() == 2);
  CHECK(tenants->at(0).iterations == 40);
  CHECK(tenants->at(0).iteration_s == Approx(0.45));
  CHECK(tenants->at(1).iterations == 0);  // a stream
  TempFile stuck(kStart + iterating("dp:h0-h6", 0, 0));
  auto read = tenant_goodput(stuck.name);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().code == Errc::kIo);
  CHECK_THAT(read.error().message, Catch::Contains("tenant dp ended no iteration"));

  char dir[] = "/tmp/contend-tenants-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  MeasuredCell cell;
  cell.throughput = 28;
  cell.tenants = *tenants;
  REQUIRE(record_cell(dir, "a.1f1b.r1", cell, IterationSpread{}).ok());
  auto cells = finished_cells(dir);
  REQUIRE(cells.ok());
  CHECK(cells->tenants.at("a.1f1b.r1").at(0).iterations == 40);
  CHECK(cells->tenants.at("a.1f1b.r1").at(0).iteration_s == Approx(0.45));
  CHECK(cells->tenants.at("a.1f1b.r1").at(1).iterations == 0);
  std::ofstream(std::string(dir) + "/cells.jsonl")
      << R"({"id": "a.r1", "throughput": 5, "tenants": [{"tenant": "dp", "flows": 1, "bps": 1, "iterations": 3}]})"
         "\n";
  CHECK_THAT(finished_cells(dir).error().message, Catch::Contains("median time"));
  std::filesystem::remove_all(dir);

  const auto summary =
      summarize_tenants({{{"dp", 4, 7e8, 40, 0.45}}, {{"dp", 4, 7e8, 38, 0.47}}, {{"dp", 4, 7e8, 41, 0.44}}});
  REQUIRE(summary.size() == 1);
  CHECK(summary[0].iteration_stats.median == Approx(0.45));
  CHECK(tenants_summary_json(summary)[0]["iteration_s"]["samples"].size() == 3);
  CHECK_FALSE(tenants_summary_json(summarize_tenants({{{"bulk", 1, 5e7}}}))[0].contains("iteration_s"));
  Summary s = summarize("e", "1f1b", "real", {{"busy", "1f1b"}}, {{{"busy", "1f1b"}, {27.0, 28.0, 29.0}}});
  s.cells[0].tenants = summary;
  CHECK_THAT(tenants_table(s), Catch::Contains("iteration ms") && Catch::Contains("450.0"));
}
