#include "contend/runner/regression/history.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "contend/common/fd.h"
#include "contend/common/json_reader.h"

namespace fs = std::filesystem;

namespace contend::runner {
namespace {

std::string field_or_empty(const JsonReader& r, const std::string& key) {
  return r.has(key) && r.at(key).json().is_string() ? r.at(key).json().get<std::string>() : "";
}

// host / CPU model / n CPUs: what makes two runs' throughputs comparable.
std::string machine_of(const JsonReader& env) {
  std::string m = field_or_empty(env, "host");
  const std::string model = field_or_empty(env, "cpu_model");
  if (!model.empty()) {
    m += " / " + model;
  }
  if (env.has("cpus") && env.at("cpus").json().is_number_integer()) {
    m += " / " + std::to_string(env.at("cpus").json().get<long long>()) + " CPUs";
  }
  return m.empty() ? "unknown machine" : m;
}

// The runs a listing file names, relative paths from its folder.
Result<std::vector<std::string>> listed(const std::string& list) {
  auto text = read_file(list);
  if (!text) {
    return text.error();
  }
  std::vector<std::string> out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) {
      continue;
    }
    out.push_back(fs::path(line).is_absolute() ? line : (fs::path(list).parent_path() / line).string());
    std::error_code ec;
    if (!fs::is_directory(out.back(), ec)) {
      return make_error(Errc::kNotFound, out.back() + ": no such run (listed in " + list + ")");
    }
  }
  return out;
}

// The results folders of a source: itself, its sub-folders that hold an env.json, or a list's.
Result<std::vector<std::string>> folders_of(const std::string& source) {
  std::error_code ec;
  if (fs::is_regular_file(source, ec)) {
    return listed(source);
  }
  if (!fs::is_directory(source, ec)) {
    return make_error(Errc::kNotFound, source + ": no such run, folder of runs or list of runs");
  }
  if (fs::exists(fs::path(source) / "env.json", ec)) {
    return std::vector<std::string>{source};
  }
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(source, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "env.json")) {
      out.push_back(entry.path().string());
    }
  }
  if (out.empty()) {
    return make_error(Errc::kNotFound, source + " holds no results folder (a folder with an env.json)");
  }
  return out;
}

// "experiment X (3 runs, e.g. DIR)" for each distinct value of `key`.
std::string counted(const std::vector<Run>& runs, std::string (*key)(const Run&)) {
  std::map<std::string, std::pair<int, std::string>> seen;
  for (const Run& r : runs) {
    auto& s = seen[key(r)];
    s.first += 1;
    s.second = s.second.empty() ? r.path : s.second;
  }
  std::string out;
  for (const auto& [value, s] : seen) {
    out +=
        (out.empty() ? "" : "; ") + ("\"" + value + "\" (" + std::to_string(s.first) + " runs, e.g. " + s.second + ")");
  }
  return out;
}

}  // namespace

Result<Run> read_run(const std::string& folder) {
  Run run;
  run.path = folder;
  auto env = read_json_file(folder + "/env.json");
  if (!env) {
    return env.error();
  }
  const JsonReader r(*env, folder + "/env.json");
  if (auto ok = r.expect_schema("env", 1); !ok) {
    return ok.error();
  }
  run.commit = field_or_empty(r, "git_commit");
  run.machine = machine_of(r);
  run.started = field_or_empty(r, "started");
  run.files = field_or_empty(r, "files_fingerprint");
  if (!fs::exists(folder + "/summary.json")) {
    return make_error(Errc::kNotFound, folder +
                                           " has no summary.json: a run cut short or still going (finish it "
                                           "with contend run --resume " +
                                           folder + ", or leave it out)");
  }
  auto summary = read_summary(folder + "/summary.json");
  if (!summary) {
    return summary.error();
  }
  run.summary = std::move(*summary);
  return run;
}

Result<std::vector<Run>> read_runs(const std::vector<std::string>& sources) {
  std::vector<Run> runs;
  for (const std::string& source : sources) {
    auto folders = folders_of(source);
    if (!folders) {
      return folders.error();
    }
    std::vector<Run> mine;
    for (const std::string& f : *folders) {
      auto run = read_run(f);
      if (!run) {
        return run.error();
      }
      mine.push_back(std::move(*run));
    }
    if (!fs::is_regular_file(source)) {  // a folder's runs in the order they started
      std::stable_sort(mine.begin(), mine.end(), [](const Run& a, const Run& b) {
        return a.started != b.started ? a.started < b.started : a.path < b.path;
      });
    }
    std::move(mine.begin(), mine.end(), std::back_inserter(runs));
  }
  return runs;
}

Result<std::vector<Run>> one_history(std::vector<Run> runs, const std::string& machine) {
  if (!machine.empty()) {
    const std::string all = counted(runs, [](const Run& r) { return r.machine; });
    runs.erase(std::remove_if(runs.begin(), runs.end(), [&machine](const Run& r) { return r.machine != machine; }),
               runs.end());
    if (runs.empty()) {
      return make_error(Errc::kNotFound, "no run on machine \"" + machine + "\"; the runs are on " + all);
    }
  }
  const std::pair<const char*, std::string (*)(const Run&)> keys[] = {
      {"experiments", [](const Run& r) { return r.summary.experiment; }},
      {"modes", [](const Run& r) { return r.summary.mode; }},
      {"machines", [](const Run& r) { return r.machine; }}};
  for (const auto& [what, key] : keys) {
    std::vector<std::string> values;
    for (const Run& r : runs) {
      values.push_back(key(r));
    }
    std::sort(values.begin(), values.end());
    if (std::unique(values.begin(), values.end()) - values.begin() > 1) {
      return make_error(Errc::kInvalidArgument,
                        std::string("the runs are of more than one of ") + what + ": " + counted(runs, key) +
                            ": a history is of one" +
                            (std::string(what) == "machines" ? " (pick it with --machine)" : ""));
    }
  }
  if (runs.size() < 2) {
    return make_error(Errc::kInvalidArgument, "a history needs at least two runs; there is " +
                                                  std::to_string(runs.size()) +
                                                  " (change points need at least 6: 3 on each side)");
  }
  return runs;
}

History history_of(std::vector<Run> runs, Quantity q, double tolerance, ChangePointOptions o) {
  History h;
  h.quantity = q;
  h.tolerance = tolerance;
  h.runs = std::move(runs);
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (std::size_t i = 0; i < h.runs.size(); ++i) {
    const Summary& s = h.runs[i].summary;
    if (i > 0 && h.runs[i].files != h.runs[i - 1].files) {
      h.files_changed.push_back(i);
    }
    for (const CellSummary& c : s.cells) {
      const std::vector<double> v = values_of(s, c, q);
      if (v.empty()) {
        continue;
      }
      auto [it, fresh] = index.try_emplace({c.scenario, c.schedule}, h.cells.size());
      if (fresh) {
        h.cells.push_back({c.scenario, c.schedule, {}, {}, {}});
      }
      h.cells[it->second].runs.push_back(i);
      h.cells[it->second].values.push_back(stats_of(v).median);
    }
  }
  o.min_change = tolerance;
  for (CellSeries& c : h.cells) {
    c.changes = change_points(c.values, o);
  }
  return h;
}

bool ends_in_loss(const CellSeries& c) {
  return !c.changes.empty() && c.changes.back().after < c.changes.back().before;
}

nlohmann::ordered_json history_json(const History& h) {
  nlohmann::ordered_json doc;
  doc["schema"] = "contend.history/1";
  const Summary& first = h.runs.front().summary;
  doc["experiment"] = first.experiment;
  doc["mode"] = first.mode;
  doc["machine"] = h.runs.front().machine;
  doc["quantity"] = quantity_name(h.quantity);
  doc["unit"] = h.quantity == Quantity::kThroughput ? first.unit : "x " + first.baseline;
  doc["tolerance"] = h.tolerance;
  doc["runs"] = nlohmann::ordered_json::array();
  for (const Run& r : h.runs) {
    doc["runs"].push_back({{"path", r.path}, {"commit", r.commit}, {"started", r.started}});
  }
  doc["files_changed_at"] = h.files_changed;
  doc["cells"] = nlohmann::ordered_json::array();
  for (const CellSeries& c : h.cells) {
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    for (const ChangePoint& p : c.changes) {
      const std::size_t run = c.runs[p.index];
      changes.push_back({{"run", run},
                         {"commit", h.runs[run].commit},
                         {"before", p.before},
                         {"after", p.after},
                         {"change", p.after / p.before - 1},
                         {"p", p.p}});
    }
    doc["cells"].push_back({{"scenario", c.scenario},
                            {"schedule", c.schedule},
                            {"runs", c.runs},
                            {"values", c.values},
                            {"change_points", changes},
                            {"ends_in_loss", ends_in_loss(c)}});
  }
  return doc;
}

std::string history_table(const History& h) {
  std::ostringstream out;
  char line[512];
  for (std::size_t i : h.files_changed) {
    out << "note: the experiment's files changed at run " << i + 1 << " (" << h.runs[i].path
        << "): a change point there may be the experiment's, not the code's\n";
  }
  for (const CellSeries& c : h.cells) {
    std::snprintf(line, sizeof line, "%-14s %-20s %3zu runs, first %.4g, last %.4g: ", c.scenario.c_str(),
                  c.schedule.c_str(), c.values.size(), c.values.front(), c.values.back());
    out << line << (c.changes.empty() ? "no change point\n" : std::to_string(c.changes.size()) + " change point(s)\n");
    for (const ChangePoint& p : c.changes) {
      const Run& run = h.runs[c.runs[p.index]];
      std::snprintf(line, sizeof line, "    at run %zu (commit %s, %s): %.4g -> %.4g (%+.1f%%), p %.3f\n",
                    c.runs[p.index] + 1, run.commit.empty() ? "?" : run.commit.c_str(), run.path.c_str(), p.before,
                    p.after, 100 * (p.after / p.before - 1), p.p);
      out << line;
    }
  }
  return out.str();
}

}  // namespace contend::runner
