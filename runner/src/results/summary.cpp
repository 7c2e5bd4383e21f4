#include "contend/runner/results/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/median.h"
#include "results/link_bytes.h"

namespace contend::runner {
namespace {

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom.
double t95(int dof) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
  if (dof < 1) {
    return 0;
  }
  return dof <= 20 ? table[dof - 1] : dof <= 30 ? 2.042 : 1.960;
}

// The ratio of two cells' medians, num / den, with the delta-method half-width from both cells'
// relative standard errors (0 with one repetition on either side); {0, 0} when either has none.
std::pair<double, double> median_ratio(const Stats& num, const Stats& den) {
  if (num.n == 0 || den.n == 0 || den.median <= 0) {
    return {0, 0};
  }
  const double ratio = num.median / den.median;
  if (num.n < 2 || den.n < 2 || num.mean <= 0 || den.mean <= 0) {
    return {ratio, 0};
  }
  const double rel_num = num.stdev / std::sqrt(num.n) / num.mean;
  const double rel_den = den.stdev / std::sqrt(den.n) / den.mean;
  return {ratio, t95(std::min(num.n, den.n) - 1) * ratio * std::sqrt(rel_num * rel_num + rel_den * rel_den)};
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A ratio's cell in the table ("1.234 +/-0.012"): "-" where it is not known, "not run".
std::string ratio_cell(const nlohmann::ordered_json& r, const std::string& name) {
  if (r.at(name + "_median").is_null()) {
    return r.at("repetitions") == 0 ? "not run" : "-";
  }
  return fmt("%.3f", r.at(name + "_median").get<double>()) +
         (r.at("repetitions") == 1 ? std::string() : " +/-" + fmt("%.3f", r.at(name + "_ci95").get<double>()));
}

}  // namespace

Stats stats_of(std::vector<double> v) {
  Stats s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) {
    return s;
  }
  s.median = median(v);
  for (double x : v) {
    s.mean += x;
  }
  s.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) {
      ss += (x - s.mean) * (x - s.mean);
    }
    s.stdev = std::sqrt(ss / static_cast<double>(v.size() - 1));
    s.ci95 = t95(s.n - 1) * s.stdev / std::sqrt(static_cast<double>(s.n));
  }
  return s;
}

Summary summarize(const std::string& experiment, const std::string& baseline, const std::string& mode,
                  const std::vector<std::pair<std::string, std::string>>& order,
                  const std::map<std::pair<std::string, std::string>, std::vector<double>>& throughput,
                  const std::string& baseline_scenario) {
  Summary out{experiment, baseline, mode, {}};
  out.baseline_scenario = baseline_scenario;
  const auto stats_at = [&](const std::pair<std::string, std::string>& key) {
    const auto it = throughput.find(key);
    return it == throughput.end() ? Stats{} : stats_of(it->second);
  };
  for (const auto& key : order) {
    CellSummary c;
    c.scenario = key.first;
    c.schedule = key.second;
    if (auto it = throughput.find(key); it != throughput.end()) {
      c.throughput = it->second;
    }
    c.stats = stats_of(c.throughput);
    std::tie(c.speedup, c.speedup_ci95) = median_ratio(c.stats, stats_at({key.first, baseline}));
    if (!baseline_scenario.empty()) {
      std::tie(c.slowdown, c.slowdown_ci95) = median_ratio(stats_at({baseline_scenario, key.second}), c.stats);
    }
    out.cells.push_back(std::move(c));
  }
  return out;
}

nlohmann::ordered_json summary_json(const Summary& s) {
  auto doc = json_document("summary", 1);
  doc["experiment"] = s.experiment;
  doc["mode"] = s.mode;
  doc["baseline"] = s.baseline;
  if (!s.baseline_scenario.empty()) {
    doc["baseline_scenario"] = s.baseline_scenario;
  }
  doc["unit"] = s.unit;
  doc["compared"] = s.compare_throughput ? "throughput" : "speedup";
  doc["cells"] = nlohmann::ordered_json::array();
  for (const CellSummary& c : s.cells) {
    nlohmann::ordered_json j;
    j["scenario"] = c.scenario;
    j["schedule"] = c.schedule;
    j["repetitions"] = c.stats.n;
    j["throughput"] = {{"median", c.stats.median},
                       {"mean", c.stats.mean},
                       {"stdev", c.stats.stdev},
                       {"ci95", c.stats.ci95},
                       {"samples", c.throughput}};
    j["speedup"] = {{"median", c.speedup}, {"ci95", c.speedup_ci95}};
    if (!s.baseline_scenario.empty()) {
      j["slowdown"] = {{"median", c.slowdown}, {"ci95", c.slowdown_ci95}};
    }
    if (!c.note.empty()) {
      j["note"] = c.note;
    }
    if (!c.link_bytes.empty()) {
      j["link_bytes"] = port_bytes_json(c.link_bytes);
    }
    if (!c.tenants.empty()) {
      j["tenants"] = tenants_summary_json(c.tenants);
    }
    doc["cells"].push_back(j);
  }
  return doc;
}

Result<void> write_summary_rows(const Summary& s, RecordWriter& out) {
  for (const CellSummary& c : s.cells) {
    // A cell that never ran (a stopped run) shows no numbers, not zeros.
    const auto value = [&c](double v) { return c.stats.n > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
    const bool has_speedup = c.stats.n > 0 && c.speedup > 0;
    nlohmann::ordered_json row;
    row["scenario"] = c.scenario;
    row["schedule"] = c.schedule;
    row["repetitions"] = c.stats.n;
    row["throughput_median"] = value(c.stats.median);
    row["throughput_mean"] = value(c.stats.mean);
    row["throughput_stdev"] = value(c.stats.stdev);
    row["throughput_ci95"] = value(c.stats.ci95);
    row["speedup_median"] = has_speedup ? nlohmann::ordered_json(c.speedup) : nlohmann::ordered_json();
    row["speedup_ci95"] = has_speedup ? nlohmann::ordered_json(c.speedup_ci95) : nlohmann::ordered_json();
    if (!s.baseline_scenario.empty()) {
      const bool has_slowdown = c.slowdown > 0;
      row["slowdown_median"] = has_slowdown ? nlohmann::ordered_json(c.slowdown) : nlohmann::ordered_json();
      row["slowdown_ci95"] = has_slowdown ? nlohmann::ordered_json(c.slowdown_ci95) : nlohmann::ordered_json();
    }
    if (auto ok = out.write(row); !ok) {
      return ok;
    }
  }
  return {};
}

std::string summary_csv(const Summary& s) {
  std::vector<Column> columns;
  for (const char* key : {"scenario", "schedule", "repetitions", "throughput_median", "throughput_mean",
                          "throughput_stdev", "throughput_ci95"}) {
    columns.push_back({key, "", 0, "%.6g", nullptr});
  }
  columns[2].format = "%.0f";
  columns.push_back({"speedup_median", "", 0, "%.4f", nullptr});
  columns.push_back({"speedup_ci95", "", 0, "%.4f", nullptr});
  if (!s.baseline_scenario.empty()) {
    columns.push_back({"slowdown_median", "", 0, "%.4f", nullptr});
    columns.push_back({"slowdown_ci95", "", 0, "%.4f", nullptr});
  }
  CsvWriter csv(columns);
  (void)write_summary_rows(s, csv);  // in memory: cannot fail
  return csv.text();
}

// The table's cells: an interval of one repetition is not known ("-"), not 0.
std::string summary_table(const Summary& s) {
  std::vector<Column> columns = {{"scenario", "", -16, "", nullptr},
                                 {"schedule", "", -22, "", nullptr},
                                 {"throughput_median", s.unit, 14, "%.1f", nullptr},
                                 {"throughput_ci95", "+/-95%", 10, "",
                                  [](const nlohmann::ordered_json& r) {
                                    const auto& ci = r.at("throughput_ci95");
                                    return ci.is_null() || r.at("repetitions") == 1 ? std::string("-")
                                                                                    : fmt("%.1f", ci.get<double>());
                                  }},
                                 {"speedup_median", "speedup vs " + s.baseline, 18, "",
                                  [](const nlohmann::ordered_json& r) { return ratio_cell(r, "speedup"); }}};
  if (!s.baseline_scenario.empty()) {
    columns.push_back({"slowdown_median", "slowdown vs " + s.baseline_scenario, 20, "",
                       [](const nlohmann::ordered_json& r) { return ratio_cell(r, "slowdown"); }});
  }
  TableWriter table(columns);
  (void)write_summary_rows(s, table);
  return table.text();
}

namespace {

// One entry of a summary's "cells": what a comparison needs of it.
// The repetitions' throughputs (what a verdict tests), each a finite number, not negative.
Result<std::vector<double>> read_samples(const JsonReader& t) {
  if (!t.has("samples") || !t.at("samples").json().is_array()) {
    return t.error("expected an array \"samples\" (one throughput per repetition)");
  }
  std::vector<double> out;
  for (const auto& v : t.at("samples").json()) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      return t.at("samples").error("expected throughputs (numbers, 0 or more), got " + v.dump());
    }
    out.push_back(v.get<double>());
  }
  return out;
}

Result<CellSummary> read_cell(const JsonReader& c) {
  auto scenario = c.string("scenario");
  auto schedule = c.string("schedule");
  if (!scenario || !schedule) {
    return scenario ? schedule.error() : scenario.error();
  }
  if (!c.has("speedup") || !c.has("throughput")) {
    return c.error("expected \"speedup\" and \"throughput\"");
  }
  auto speedup = c.at("speedup").number("median");
  auto median = c.at("throughput").number("median");
  auto ci95 = c.at("throughput").optional_number("ci95");
  if (auto e = first_error(speedup, median, ci95)) {
    return *e;
  }
  CellSummary cell;
  cell.scenario = *scenario;
  cell.schedule = *schedule;
  cell.speedup = *speedup;
  cell.stats.median = *median;
  cell.stats.ci95 = ci95->value_or(0);
  cell.stats.n =
      c.has("repetitions") && c.json()["repetitions"].is_number_integer() ? c.json()["repetitions"].get<int>() : 1;
  auto samples = read_samples(c.at("throughput"));
  if (!samples) {
    return samples.error();
  }
  cell.throughput = std::move(*samples);
  return cell;
}

}  // namespace

Result<Summary> read_summary(const std::string& path) {
  auto json = read_json_file(path);
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, path);
  if (auto ok = r.expect_schema("summary", 1); !ok) {
    return ok.error();
  }
  Summary s;
  auto baseline = r.string("baseline");
  auto experiment = r.string("experiment");
  auto mode = r.string("mode");
  if (auto e = first_error(baseline, experiment, mode)) {
    return *e;
  }
  s.baseline = *baseline;
  s.experiment = *experiment;
  s.mode = *mode;
  auto unit = r.optional_string("unit");
  auto compared = r.optional_string("compared");
  if (auto e = first_error(unit, compared)) {
    return *e;
  }
  s.unit = unit->value_or(s.unit);
  s.compare_throughput = compared->value_or("speedup") == "throughput";
  if (!r.has("cells") || !r.at("cells").json().is_array()) {
    return r.error("expected an array \"cells\"");
  }
  const JsonReader cells = r.at("cells");
  for (std::size_t i = 0; i < cells.json().size(); ++i) {
    auto cell = read_cell(cells.at(i));
    if (!cell) {
      return cell.error();
    }
    s.cells.push_back(std::move(*cell));
  }
  return s;
}

Result<void> check_comparable(const Summary& now, const Summary& reference, const std::string& reference_path,
                              bool throughput) {
  if (now.mode != reference.mode) {
    return make_error(Errc::kInvalidArgument, reference_path + " is a " + reference.mode + " run; this one is " +
                                                  now.mode + ": compare real runs with real, simulated with simulated");
  }
  if (now.experiment != reference.experiment) {
    return make_error(Errc::kInvalidArgument, reference_path + " is of experiment \"" + reference.experiment +
                                                  "\"; this run is of \"" + now.experiment + "\"");
  }
  if (reference.cells.empty()) {
    return make_error(Errc::kInvalidArgument, reference_path + " has no cells: there is nothing to compare with");
  }
  for (const CellSummary& ref : reference.cells) {
    const double was = throughput ? ref.stats.median : ref.speedup;
    if (!(was > 0) || !std::isfinite(was)) {
      return make_error(Errc::kInvalidArgument,
                        reference_path + ": cell " + ref.scenario + " / " + ref.schedule + " has " +
                            (throughput ? "a throughput" : "a speedup") + " of " + fmt("%g", was) +
                            ": a reference must be positive (a cell that never ran, or an edited file?)");
    }
  }
  return {};
}

}  // namespace contend::runner
