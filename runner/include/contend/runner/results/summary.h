#pragma once
// Aggregating repetitions into contend.summary/1 (docs/experiment-format.md, docs/metrics.md): per scenario
// and schedule the throughput's median, mean, stdev and 95% confidence interval, the speedup
// over the baseline schedule and, when the experiment names a baseline scenario, the slowdown
// against it (the same schedule there), each with its interval; JSON, CSV and a console table from the same
// values; and whether two summaries compare (the verdict: regression/verdict.h). Pure.

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/records.h"
#include "contend/common/result.h"
#include "contend/runner/results/port_bytes.h"
#include "contend/runner/results/tenant_goodput.h"

namespace contend::runner {

struct Stats {
  int n = 0;
  double median = 0;
  double mean = 0;
  double stdev = 0;  // sample standard deviation (n - 1); 0 when n < 2
  double ci95 = 0;   // half-width of the t interval of the mean; 0 when n < 2
};
Stats stats_of(std::vector<double> values);

// Another tenant's goodput in a cell over its repetitions (tenant_goodput.h).
struct TenantSummary {
  std::string tenant;
  int flows = 0;
  std::vector<double> bps;  // one per repetition that ran it
  Stats stats;
  std::vector<double> iteration_s;  // a closed-loop job's median iteration time, per repetition
  Stats iteration_stats;
};
// The tenants of a cell's repetitions, in the order first seen, each with its goodputs' stats.
std::vector<TenantSummary> summarize_tenants(const std::vector<std::vector<TenantGoodput>>& repetitions);
// summary.json's "tenants" of a cell: [{"tenant", "flows", "goodput_bps": {median, ci95, samples}}],
// a closed-loop job's with "iteration_s" alike.
nlohmann::ordered_json tenants_summary_json(const std::vector<TenantSummary>& tenants);

struct CellSummary {
  std::string scenario;
  std::string schedule;
  std::vector<double> throughput;  // samples/s, one per repetition
  Stats stats;
  double speedup = 0;       // median over the baseline's median
  double speedup_ci95 = 0;  // delta-method half-width from both cells' relative standard errors
  // The baseline scenario's median over this cell's (1.25: 25% slower here), and its half-width;
  // 0 when the experiment names no baseline scenario or either cell has not run.
  double slowdown = 0;
  double slowdown_ci95 = 0;
  std::string note;  // shown with the cell (the oracle: a reference, not a scheduler)
  // What the cell sent over each shaped end, the repetitions' medians (port_bytes.h); empty where
  // nothing was recorded (a simulated run, cluster hosts).
  std::vector<PortBytes> link_bytes;
  // The other tenants' goodputs (a cell run here whose scenario has flows); empty otherwise.
  std::vector<TenantSummary> tenants;
};

struct Summary {
  std::string experiment;
  std::string baseline;
  std::string mode;  // "real" or "simulated"
  std::vector<CellSummary> cells;
  std::string unit = "samples/s";  // of every throughput: a user's job's output says its own
  // What --compare compares by default: each cell's speedup over the baseline (contend's pipeline:
  // machines differ, ratios less), or its throughput (a user's job, checked against its own runs).
  bool compare_throughput = false;
  std::string baseline_scenario{};  // a scenario's name, or empty: no slowdown
};

// One cell per (scenario, schedule) in the order given. `throughput` maps (scenario, schedule) to
// the repetitions' samples/s; `baseline_scenario` (empty: none) is what slowdowns are against.
Summary summarize(const std::string& experiment, const std::string& baseline, const std::string& mode,
                  const std::vector<std::pair<std::string, std::string>>& order,
                  const std::map<std::pair<std::string, std::string>, std::vector<double>>& throughput,
                  const std::string& baseline_scenario = "");

nlohmann::ordered_json summary_json(const Summary& s);
// Every cell as one flat record (scenario, schedule, repetitions, throughput_median, _mean,
// _stdev, _ci95, speedup_median, speedup_ci95) to `out`: summary.csv's rows, the table's.
Result<void> write_summary_rows(const Summary& s, RecordWriter& out);
// The CSV (summary.csv) and the aligned console table of the same rows.
std::string summary_csv(const Summary& s);
std::string summary_table(const Summary& s);
// The console table of every cell's tenants (median goodput in Mbit/s, its interval); "" when no
// cell has any.
std::string tenants_table(const Summary& s);
// Reads a summary.json (kParse naming the file and field when it is not contend.summary/1).
Result<Summary> read_summary(const std::string& path);

// kInvalidArgument when `reference` is of another experiment or mode (simulated against real):
// their values do not compare; or when it has no cells, or a cell whose value compared (its
// speedup, or with `throughput` its throughput) is not a positive number: nothing would be
// compared. The verdict itself: regression/verdict.h.
Result<void> check_comparable(const Summary& now, const Summary& reference, const std::string& reference_path,
                              bool throughput);

}  // namespace contend::runner
