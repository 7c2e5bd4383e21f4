#include "run/results_folder.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/records.h"
#include "contend/runner/hosts/hosts.h"
#include "results/results_dir.h"
#include "results/throughput.h"

namespace contend::runner {
namespace {

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// env.json of a new folder: the experiment, its files' fingerprint, the mode, what the caller adds.
nlohmann::ordered_json env_of(const Experiment& e, const RunOptions& o) {
  nlohmann::ordered_json env = json_document("env", 1);
  env["experiment"] = e.name;
  env["experiment_file"] = std::filesystem::absolute(e.source).string();
  env["files_fingerprint"] = files_fingerprint(e);
  env["mode"] = mode_of(o);
  if (o.repetitions > 0) {  // what --resume goes on with
    env["repetitions"] = o.repetitions;
  }
  if (o.env) {
    const nlohmann::ordered_json extra = o.env();
    for (const auto& item : extra.items()) {
      env[item.key()] = item.value();
    }
  }
  env["started"] = timestamp();
  return env;
}

std::string truth_path(const std::string& dir, const Experiment& e, int scenario) {
  return dir + "/truth/" + e.scenarios[scenario].name + ".json";
}

// Whether the workers of a scenario's cells are told its network: an oracle among the schedules
// reads its rates, and every rank's transport applies its stalls.
bool needs_truth(const Experiment& e, int scenario) {
  if (e.job) {
    return false;  // a user's job reads no truth, and only contend's transport applies stalls
  }
  return e.scenarios[scenario].has_stalls() ||
         std::any_of(e.schedules.begin(), e.schedules.end(),
                     [](const ScheduleEntry& s) { return s.schedule.reads_truth; });
}

// What the report needs to know of the experiment beyond the cells (`truths`: each scenario's
// network, as networks_of resolved it).
void describe_experiment(nlohmann::ordered_json& doc, const Experiment& e, const std::vector<ScenarioNetwork>& truths,
                         const std::vector<std::map<std::string, std::string>>& cluster_hosts) {
  const Workload& w = e.workload;
  doc["workload"] = {{"stages", w.stages},         {"microbatches", w.microbatches},
                     {"iterations", w.iterations}, {"warmup", w.warmup},
                     {"backend", w.backend.str()}, {"samples_per_iteration", w.samples_per_iteration()}};
  nlohmann::ordered_json scenarios = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < e.scenarios.size(); ++i) {
    const emulator::Scenario& s = e.scenarios[i];
    double bottleneck = 0;
    for (const auto& l : s.links) {
      bottleneck = bottleneck == 0 ? l.rate_bps : std::min(bottleneck, l.rate_bps);
    }
    double stall = 0;
    std::set<std::string> stalled;
    for (const auto* events : {&s.events, &s.iteration_events}) {
      for (const emulator::Event& ev : *events) {
        const auto* set = std::get_if<emulator::SetStall>(&ev.action);
        if (set != nullptr && set->stall_s > 0) {
          stall = std::max(stall, set->stall_s);
          stalled.insert(set->link);
        }
      }
    }
    scenarios[s.name] = {{"description", s.description},
                         {"bottleneck_bps", bottleneck},
                         {"steady", s.events.empty() && s.iteration_events.empty()},
                         {"stall_s", stall},
                         {"stalled_links", stalled}};
    if (s.has_fabric()) {
      // Where the ranks ran and the ports their transfers crossed (the report's port figure).
      scenarios[s.name]["rank_hosts"] = std::vector<std::string>(s.nodes.begin(), s.nodes.begin() + w.stages);
      scenarios[s.name]["rank_ports"] = i < truths.size() ? truths[i].crossed_ports : std::set<std::string>{};
      if (i < cluster_hosts.size() && !cluster_hosts[i].empty()) {  // on cluster hosts (--hosts)
        scenarios[s.name]["rank_inventory_hosts"] = rank_inventory_hosts(s, cluster_hosts[i]);
      }
    }
  }
  doc["scenarios"] = scenarios;
  nlohmann::ordered_json schedules = nlohmann::ordered_json::object();
  for (const ScheduleEntry& entry : e.schedules) {
    schedules[entry.name] = {{"schedule", entry.schedule.spec.str()},
                             {"transport", entry.transport.value_or(w.transport).str()}};
  }
  doc["schedules"] = schedules;
}

}  // namespace

std::string mode_of(const RunOptions& o) {
  return o.simulate ? "simulated" : "real";
}

Result<Experiment> as_run(const Experiment& e, const RunOptions& o) {
  auto began = o.resume.empty() ? Result<int>(o.repetitions) : resumed_repetitions(o.resume);
  if (!began) {
    return with_context(began.error(), "--resume " + o.resume);
  }
  Experiment run = e;
  if (*began > 0) {
    run.repetitions = *began;
  }
  return run;
}

CellFiles files_of(const std::string& dir, const Experiment& e, const Cell& cell) {
  CellFiles files{dir + "/runs/" + cell.id + ".jsonl", dir + "/events/" + cell.id + ".jsonl",
                  dir + "/runs/" + cell.id + ".log", "", ""};
  if (cell.repetition == 0) {
    files.trace_prefix = dir + "/traces/" + cell.id;
  }
  if (needs_truth(e, cell.scenario)) {
    files.truth = truth_path(dir, e, cell.scenario);
  }
  return files;
}

Result<std::string> open_results(const Experiment& e, const RunOptions& o) {
  if (!o.resume.empty()) {
    if (auto ok = check_resume(o.resume, e.name, mode_of(o), files_fingerprint(e)); !ok) {
      return ok.error();
    }
    return o.resume;
  }
  auto dir = create_results_dir(o.out, "results/" + e.name + "-" + timestamp() + (o.simulate ? "-sim" : ""));
  if (!dir) {
    return dir.error();
  }
  if (auto ok = write_json_document(*dir + "/env.json", env_of(e, o)); !ok) {
    return ok.error();
  }
  if (o.calibration) {  // the simulation's costs, beside its results
    if (auto ok = write_calibration(*dir + "/calibration.json", *o.calibration); !ok) {
      return ok.error();
    }
  }
  return dir;
}

Result<void> write_truths(const std::string& dir, const Experiment& e, const std::vector<ScenarioNetwork>& truths) {
  for (std::size_t s = 0; s < e.scenarios.size(); ++s) {
    if (!needs_truth(e, static_cast<int>(s))) {
      continue;
    }
    auto links = chain_rates(e.scenarios[s], truths[s].links);
    auto back = chain_rates(e.scenarios[s], back_links(truths[s]));
    if (!links || !back) {
      return !links ? links.error() : back.error();
    }
    std::error_code ec;
    std::filesystem::create_directories(dir + "/truth", ec);
    const NetworkTruth truth{std::move(*links), truths[s].stalls, std::move(*back)};
    if (auto ok = write_truth(truth_path(dir, e, static_cast<int>(s)), e.scenarios[s].name, truth); !ok) {
      return ok;
    }
  }
  return {};
}

Summary summary_of(const Experiment& e, const std::vector<Cell>& cells, const FinishedCells& done,
                   const std::string& mode) {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<double>> throughput;
  std::map<std::pair<std::string, std::string>, std::vector<std::vector<PortBytes>>> traffic;
  std::map<std::pair<std::string, std::string>, std::vector<std::vector<TenantGoodput>>> tenants;
  std::map<std::string, bool> reads_truth;  // by the schedule's name: the oracle, the observer
  for (const auto& cell : cells) {
    const auto key = std::pair{e.scenarios[cell.scenario].name, cell.name};
    reads_truth[key.second] = !e.job && schedule_of(e, cell).reads_truth;
    if (cell.repetition == 0) {
      order.push_back(key);
    }
    if (auto it = done.throughput.find(cell.id); it != done.throughput.end()) {
      throughput[key].push_back(it->second);
    }
    if (auto it = done.link_bytes.find(cell.id); it != done.link_bytes.end()) {
      traffic[key].push_back(it->second);
    }
    if (auto it = done.tenants.find(cell.id); it != done.tenants.end()) {
      tenants[key].push_back(it->second);
    }
  }
  Summary s = summarize(e.name, e.baseline, mode, order, throughput, e.baseline_scenario);
  if (e.job) {
    s.unit = output_unit(e.job->output);
    s.compare_throughput = true;
  }
  for (CellSummary& c : s.cells) {
    if (reads_truth[c.schedule]) {
      c.note = c.schedule +
               ": reads the scenario's ground truth; a reference for comparison (not a bound on a real run), not a "
               "real scheduler";
    }
    if (auto it = traffic.find({c.scenario, c.schedule}); it != traffic.end()) {
      c.link_bytes = median_port_bytes(it->second);
    }
    if (auto it = tenants.find({c.scenario, c.schedule}); it != tenants.end()) {
      c.tenants = summarize_tenants(it->second);
    }
  }
  return s;
}

Result<void> write_summary(const std::string& dir, const Experiment& e, const Summary& s,
                           const std::vector<ScenarioNetwork>& truths,
                           const std::vector<std::map<std::string, std::string>>& cluster_hosts) {
  auto doc = summary_json(s);
  describe_experiment(doc, e, truths, cluster_hosts);
  if (auto ok = write_json_document(dir + "/summary.json", doc); !ok) {
    return ok;
  }
  return write_file_atomic(dir + "/summary.csv", summary_csv(s));
}

}  // namespace contend::runner
