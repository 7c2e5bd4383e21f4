#include "contend/runner/run.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include "contend/common/cpu_times.h"
#include "contend/common/fd.h"
#include "contend/common/fnv.h"
#include "contend/common/json.h"
#include "contend/common/keep_awake.h"
#include "contend/common/records.h"
#include "contend/common/units.h"
#include "contend/runner/job/job_cell.h"
#include "contend/runner/job/job_log.h"
#include "contend/runner/results/results_dir.h"
#include "contend/runner/results/throughput.h"
#include "contend/runner/truth/network.h"
#include "real/traffic.h"
#include "results/progress.h"
#include "simulated/simulated_cell.h"

namespace contend::runner {
namespace {

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

std::string mode_of(const RunOptions& o) {
  return o.simulate ? "simulated" : "real";
}

// A file as the fingerprint reads it: its JSON, keys in order, without "description" (layout and
// prose change no result), else its bytes.
std::string fingerprinted(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    return {};
  }
  auto json = parse_json(*text, path);
  if (!json || !json->is_object()) {
    return *text;
  }
  json->erase("description");
  return json->dump();
}

// The fingerprint of the files the experiment was read from (its own and its scenarios'), in hex:
// a run is resumed only with the files it began with.
std::string files_fingerprint(const Experiment& e) {
  std::uint64_t h = kFnv1aStart;
  std::vector<std::string> files{e.source};
  files.insert(files.end(), e.scenario_files.begin(), e.scenario_files.end());
  for (const std::string& file : files) {
    h = fnv1a(std::string_view("\0", 1), fnv1a(fingerprinted(file), h));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// The results folder: a new one (env.json written) or the resumed one (checked).
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
  nlohmann::ordered_json env = json_document("env", 1);
  env["experiment"] = e.name;
  env["experiment_file"] = std::filesystem::absolute(e.source).string();
  env["files_fingerprint"] = files_fingerprint(e);
  env["mode"] = mode_of(o);
  if (o.env) {
    const nlohmann::ordered_json extra = o.env();
    for (const auto& item : extra.items()) {
      env[item.key()] = item.value();
    }
  }
  env["started"] = timestamp();
  if (auto ok = write_json_document(*dir + "/env.json", env); !ok) {
    return ok.error();
  }
  if (o.calibration) {  // the simulation's costs, beside its results
    if (auto ok = write_calibration(*dir + "/calibration.json", *o.calibration); !ok) {
      return ok.error();
    }
  }
  return dir;
}

// Runs one cell into `files`: simulated, on hosts, or in namespaces here.
Result<void> run_one(const Experiment& e, const Cell& cell, const CellFiles& files, const RunOptions& o,
                     const ScenarioNetwork& truth, const std::atomic<bool>& stop) {
  if (o.simulate) {
    const Calibration none;
    const Calibration& c = o.calibration ? *o.calibration : none;
    Workload w = calibrated_workload(e.workload, c);
    w.transport = cell.transport;
    auto rows = simulate_cell(w, cell.schedule, truth, c.runtime);
    if (!rows) {
      return rows.error();
    }
    return write_simulated_cell(files, files.trace_prefix.empty() ? "" : files.trace_prefix + ".json", e, cell, *rows);
  }
  if (o.hosts) {
    return run_cell_hosts(e, cell, files, *o.hosts, stop);
  }
  return e.job ? run_job_cell(e, cell, files, o.launch, stop) : run_cell(e, cell, files, o.launch, stop);
}

// The summary of the cells finished in `done`, in the matrix's order.
Summary summary_of(const Experiment& e, const std::vector<Cell>& cells, const std::map<std::string, double>& done,
                   const std::string& mode) {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<double>> throughput;
  std::map<std::string, const Spec*> specs;
  for (const auto& cell : cells) {
    const auto key = std::pair{e.scenarios[cell.scenario].name, cell.name};
    specs[key.second] = &cell.schedule;
    if (cell.repetition == 0) {
      order.push_back(key);
    }
    if (auto it = done.find(cell.id); it != done.end()) {
      throughput[key].push_back(it->second);
    }
  }
  Summary s = summarize(e.name, e.baseline, mode, order, throughput);
  if (e.job) {
    s.unit = output_unit(e.job->output);
    s.compare_throughput = true;
  }
  for (CellSummary& c : s.cells) {
    if (!e.job && pipeline::reads_truth(*specs[c.schedule])) {
      c.note =
          "oracle: reads the scenario's ground truth; a reference for comparison (not a bound on a real run), not a "
          "real scheduler";
    }
  }
  return s;
}

Result<void> write_summary(const std::string& dir, const Experiment& e, const Summary& s) {
  auto doc = summary_json(s);
  describe_experiment(doc, e);
  if (auto ok = write_json_document(dir + "/summary.json", doc); !ok) {
    return ok;
  }
  return write_file_atomic(dir + "/summary.csv", summary_csv(s));
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
                     [](const ScheduleEntry& s) { return pipeline::reads_truth(s.schedule); });
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

// Each scenario's network, resolved once, for the workers to read (--truth): written where
// needs_truth says they need it.
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

// calibration.json of a real run, from the baseline's finished cells (calibration.h).
Result<Calibration> record_calibration(const Experiment& e, const std::string& dir, const std::vector<Cell>& cells,
                                       const std::map<std::string, double>& done, const Summary& summary,
                                       const std::vector<ScenarioNetwork>& truths) {
  if (e.job) {
    return make_error(Errc::kUnsupported, "a user's job is not contend's pipeline, which the simulator models");
  }
  std::vector<std::string> metrics;
  std::vector<double> starts;  // of the baseline's cells, on the scenario's clock
  for (const Cell& cell : cells) {
    if (cell.name == e.baseline && done.count(cell.id) != 0) {
      const CellFiles files = files_of(dir, e, cell);
      metrics.push_back(files.metrics);
      auto clock = scenario_clock(files.events);
      auto start = clock ? first_iteration_s(files.metrics, clock->zero_s) : Result<double>(clock.error());
      if (start) {
        starts.push_back(*start);
      }
    }
  }
  std::vector<MeasuredScenario> medians;
  for (std::size_t s = 0; s < e.scenarios.size(); ++s) {
    for (const CellSummary& c : summary.cells) {
      if (c.scenario == e.scenarios[s].name && c.schedule == e.baseline && !c.throughput.empty()) {
        medians.push_back({c.scenario, &truths[s], c.stats.median});
      }
    }
  }
  const auto base = std::find_if(e.schedules.begin(), e.schedules.end(),
                                 [&](const ScheduleEntry& s) { return s.name == e.baseline; });
  Workload w = e.workload;
  w.transport = base->transport.value_or(w.transport);
  auto c = calibrate_from_run(w, base->schedule, metrics, medians, e.measure, stats_of(starts).median);
  if (!c) {
    return c.error();
  }
  c->source += ", in " + dir;
  if (auto ok = write_calibration(dir + "/calibration.json", *c); !ok) {
    return ok.error();
  }
  return c;
}

// Before anything: a real run on this host needs what its backend needs here (cuda: a device); a
// user's job runs only for real, and here in a folder that is here (on hosts, each host's own).
Result<void> check_runnable_here(const Experiment& e, const RunOptions& o) {
  if (e.job && o.simulate) {
    return make_error(Errc::kInvalidArgument, e.source +
                                                  ": a command experiment runs a user's job, which the "
                                                  "simulator cannot model; run it without --simulate");
  }
  std::error_code ec;
  if (e.job && !o.hosts && !std::filesystem::is_directory(e.job->workdir, ec)) {
    return make_error(Errc::kNotFound, e.source + ": /workload/workdir: " + e.job->workdir +
                                           " is not a folder here; the ranks would start in it");
  }
  if (e.job) {
    return {};
  }
  const auto& available = pipeline::backends().find(e.workload.backend)->kind.available;
  if (!available || o.simulate || o.hosts) {
    return {};
  }
  if (auto ok = available(); !ok) {
    return with_context(ok.error(), e.source + ": /workload/backend");
  }
  return {};
}

// Runs `cell` into its files (the stale ones of an interrupted attempt removed first) and
// measures it: its throughput, or why not.
Result<double> measure_cell(const Experiment& e, const Cell& cell, const std::string& dir, const RunOptions& o,
                            const ScenarioNetwork& truth, const std::atomic<bool>& stop) {
  const CellFiles files = files_of(dir, e, cell);
  std::vector<std::string> stale = {files.metrics, files.events, files.log};
  for (int r = 0; e.job && r < static_cast<int>(e.scenarios[cell.scenario].nodes.size()); ++r) {
    stale.push_back(rank_log_path(files.log, r));  // read for the first to fail, on one host or many
  }
  std::error_code ec;
  for (const std::string& path : stale) {
    std::filesystem::remove(path, ec);  // a cell interrupted before runs again from scratch
  }
  if (auto ok = run_one(e, cell, files, o, truth, stop); !ok) {
    return ok.error();
  }
  if (!e.job) {
    return cell_throughput(files.metrics, e.workload, e.measure, files.events);
  }
  auto throughput = job_throughput(*e.job, files.log, e.measure, files.events);
  if (throughput) {
    if (auto ok = write_job_steps(*e.job, files.log, files.events, job_steps_path(files.log)); !ok) {
      return ok.error();
    }
  }
  return throughput;
}

std::optional<CpuTimes> cpu_now() {
  auto t = read_cpu_times();
  return t ? std::optional<CpuTimes>(*t) : std::nullopt;
}

// What the hypervisor took of this machine's CPU since `before`; nothing when it cannot tell.
std::optional<double> stolen_since(const std::optional<CpuTimes>& before) {
  const std::optional<CpuTimes> after = cpu_now();
  if (!before || !after) {
    return std::nullopt;
  }
  return steal_share(*before, *after);
}

// Runs `cell` (measure_cell) and, on this host, what the hypervisor took of the machine's CPU
// meanwhile; a cell that lost much is said (its record keeps it either way).
Result<MeasuredCell> measure_with_steal(const Experiment& e, const Cell& cell, const std::string& dir,
                                        const RunOptions& o, const ScenarioNetwork& truth,
                                        const std::atomic<bool>& stop) {
  constexpr double kSaid = 0.10;  // costs a few percent of a cell's throughput (docs/experiment-format.md)
  const std::optional<CpuTimes> before = o.simulate || o.hosts ? std::nullopt : cpu_now();
  auto throughput = measure_cell(e, cell, dir, o, truth, stop);
  if (!throughput) {
    return throughput.error();
  }
  const MeasuredCell m{*throughput, stolen_since(before)};
  if (m.steal.value_or(0) > kSaid) {
    std::fprintf(stderr,
                 "contend run: %s: the hypervisor took %.1f%% of this machine's CPU while it ran (steal); the cell "
                 "counts it, but every process of it waited meanwhile%s\n",
                 cell.id.c_str(), 100 * *m.steal, o.keep_awake ? "" : " (--keep-awake keeps the CPUs from idling)");
  }
  return m;
}

// How even a finished cell's iterations were; an iteration many times the median is said (a
// worker stopped, a stalled machine: the cell counts it, and its record shows it).
IterationSpread spread_of(const std::string& metrics, const Workload& w, const std::string& id) {
  constexpr double kStalled = 5;
  const auto spread = iteration_spread(metrics, w);
  if (!spread) {
    return {};
  }
  if (spread->median_s > 0 && spread->slowest_s > kStalled * spread->median_s) {
    std::fprintf(stderr,
                 "contend run: %s: iteration %d took %s, %.0fx the median %s (was a worker stopped, or the machine "
                 "stalled?); the cell counts it\n",
                 id.c_str(), spread->slowest, format_seconds(spread->slowest_s).c_str(),
                 spread->slowest_s / spread->median_s, format_seconds(spread->median_s).c_str());
  }
  return *spread;
}

// Runs the cells not `done` yet, in order, until one fails or `stop`; records each finished one.
void run_cells(const Experiment& e, const std::vector<Cell>& cells, const std::string& dir, const RunOptions& o,
               const std::vector<ScenarioNetwork>& truths, std::map<std::string, double>& done, RunOutcome& out,
               const std::atomic<bool>& stop) {
  Progress progress(cells.size());
  std::size_t ran = 0;
  for (std::size_t i = 0; i < cells.size() && !stop.load() && !out.failed; ++i) {
    const Cell& cell = cells[i];
    if (done.count(cell.id) != 0) {
      continue;
    }
    progress.cell(i, cell.id, ran++);
    auto measured = measure_with_steal(e, cell, dir, o, truths[cell.scenario], stop);
    if (!measured) {
      if (!stop.load()) {
        out.failed = with_context(measured.error(), cell.id);
      }
      continue;
    }
    done[cell.id] = measured->throughput;
    const IterationSpread spread = spread_of(files_of(dir, e, cell).metrics, e.workload, cell.id);
    if (auto ok = record_cell(dir, cell.id, *measured, spread); !ok) {
      out.failed = ok.error();
    }
  }
  progress.end();
}

void announce(const Experiment& e, const RunOptions& o, std::size_t cells, const std::string& dir) {
  const std::string where = o.simulate ? "simulated" : o.hosts ? "on cluster hosts" : "real, in network namespaces";
  std::fprintf(stderr, "contend run: %s, %zu cells (%s), results in %s\n", e.name.c_str(), cells, where.c_str(),
               dir.c_str());
  for (const std::string& warning : unshaped_traffic(e)) {
    std::fprintf(stderr, "contend run: note: %s\n", warning.c_str());
  }
  for (std::size_t s = 0; e.job && !o.hosts && s < e.scenarios.size(); ++s) {  // hosts reach each other
    const auto pairs = unlinked_rank_pairs(e.scenarios[s]);
    if (!pairs.empty()) {
      std::fprintf(stderr,
                   "contend run: note: scenario %s: %s share no link, so their ranks cannot reach each other (only "
                   "link neighbours are routed); a job whose ranks all talk (an all-reduce) needs a link between "
                   "every pair\n",
                   e.scenarios[s].name.c_str(), pairs.front().c_str());
    }
  }
}

}  // namespace

Result<RunOutcome> run_experiment(const Experiment& e, RunOptions o, const std::atomic<bool>& stop) {
  if (auto ok = check_runnable_here(e, o); !ok) {
    return ok.error();
  }
  std::vector<ScenarioNetwork> truths;
  for (const auto& s : e.scenarios) {
    auto t = scenario_network(s);
    if (!t) {
      return t.error();
    }
    truths.push_back(std::move(*t));
  }
  auto dir = open_results(e, o);
  if (!dir) {
    return dir.error();
  }
  auto lock = lock_results_dir(*dir);  // held by the outcome, through the caller's report
  if (!lock) {
    return lock.error();
  }
  auto done = finished_cells(*dir);
  if (!done) {
    return done.error();
  }
  if (!o.simulate) {
    if (auto ok = write_truths(*dir, e, truths); !ok) {
      return ok.error();
    }
  }
  if (o.hosts) {
    o.hosts->results = std::filesystem::absolute(*dir).string();
  }
  RunOutcome out;
  out.dir = *dir;
  out.lock = std::move(*lock);
  const std::vector<Cell> cells = expand(e);
  out.cells_total = cells.size();
  announce(e, o, cells.size(), *dir);
  std::unique_ptr<KeepAwake> awake;
  if (o.keep_awake && !o.simulate && !o.hosts) {
    auto started = KeepAwake::start();
    if (!started) {
      return started.error();
    }
    awake = std::move(*started);
  }
  run_cells(e, cells, *dir, o, truths, *done, out, stop);
  awake.reset();
  out.stopped = stop.load();
  out.cells_done = done->size();
  out.summary = summary_of(e, cells, *done, mode_of(o));
  if (auto ok = write_summary(*dir, e, out.summary); !ok) {
    out.unsaved = ok.error();  // the caller still prints the table and how to resume (a full disk)
    return out;
  }
  if (!o.simulate) {
    auto c = record_calibration(e, *dir, cells, *done, out.summary, truths);
    if (c) {
      out.calibration = std::move(*c);
    } else {
      out.calibration_missing = c.error().message;
    }
  }
  return out;
}

}  // namespace contend::runner
