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
