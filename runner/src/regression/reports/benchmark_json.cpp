// The latest run's cells as benchmark results: benchmark.json in github-action-benchmark's
// "customBiggerIsBetter" form (a list of name, unit, value, range) and bmf.json in Bencher's
// Metric Format (name -> measure -> value with lower and upper values), the 95% interval of the
// repetitions' mean as the range.

#include <algorithm>
#include <cstdio>

#include "regression/reports/registry.h"

namespace contend::runner::ci_reports {
namespace {

struct Point {
  std::string name;
  Stats stats;
};

std::vector<Point> points(const CiReportInput& in) {
  std::vector<Point> out;
  for (const CellSummary& c : in.now->cells) {
    const std::vector<double> v = values_of(*in.now, c, in.options.quantity);
    if (!v.empty()) {
      out.push_back({ci_cell_name(*in.now, c.scenario, c.schedule), stats_of(v)});
    }
  }
  return out;
}

std::string unit_of(const CiReportInput& in) {
  return in.options.quantity == Quantity::kThroughput ? in.now->unit : "x " + in.now->baseline;
}

}  // namespace

std::string github_benchmark(const CiReportInput& in) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::array();
  for (const Point& p : points(in)) {
    char range[64];
    std::snprintf(range, sizeof range, "± %.4g", p.stats.ci95);
    doc.push_back({{"name", p.name},
                   {"unit", unit_of(in)},
                   {"value", p.stats.median},
                   {"range", range},
                   {"extra", std::to_string(p.stats.n) + " repetitions, median"}});
  }
  return doc.dump(2) + "\n";
}

std::string bencher_bmf(const CiReportInput& in) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const Point& p : points(in)) {
    doc[p.name][quantity_name(in.options.quantity)] = {
        {"value", p.stats.median},
        {"lower_value", std::min(p.stats.median, p.stats.mean - p.stats.ci95)},
        {"upper_value", std::max(p.stats.median, p.stats.mean + p.stats.ci95)}};
  }
  return doc.dump(2) + "\n";
}

}  // namespace contend::runner::ci_reports
