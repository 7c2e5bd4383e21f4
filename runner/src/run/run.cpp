#include "contend/runner/run.h"

#include <cstdio>
#include <filesystem>
#include <set>

#include "contend/common/keep_awake.h"
#include "job/job_cell.h"
#include "real/traffic.h"
#include "results/progress.h"
#include "results/results_dir.h"
#include "run/measure.h"
#include "run/record_calibration.h"
#include "run/results_folder.h"

namespace contend::runner {
namespace {

// What the cell loop keeps: the finished cells' throughput and traffic, and this run's baseline logs.
struct Finished {
  FinishedCells done;                        // by cell id, this run's and earlier runs'
  std::map<std::string, IterationLog> logs;  // the baseline's, as read when measured
};

// Runs the cells not finished yet, in order, until one fails or `stop`; records each finished one.
void run_cells(const Experiment& e, const std::vector<Cell>& cells, const std::string& dir, const RunOptions& o,
               const std::vector<ScenarioNetwork>& truths, Finished& finished, RunOutcome& out,
               const std::atomic<bool>& stop) {
  Progress progress(cells.size());
  std::size_t ran = 0;
  for (std::size_t i = 0; i < cells.size() && !stop.load() && !out.failed; ++i) {
    const Cell& cell = cells[i];
    if (finished.done.throughput.count(cell.id) != 0) {
      continue;
    }
    progress.cell(i, cell.id, ran++);
    auto outcome = measure_cell(e, cell, dir, o, truths[cell.scenario], stop);
    if (!outcome) {
      if (!stop.load()) {
        out.failed = with_context(outcome.error(), cell.id);
      }
      continue;
    }
    finished.done.throughput[cell.id] = outcome->measured.throughput;
    if (!outcome->measured.link_bytes.empty()) {
      finished.done.link_bytes[cell.id] = outcome->measured.link_bytes;
    }
    if (!outcome->measured.tenants.empty()) {
      finished.done.tenants[cell.id] = outcome->measured.tenants;
    }
    if (outcome->log && cell.name == e.baseline) {
      finished.logs[cell.id] = std::move(*outcome->log);
    }
    if (auto ok = record_cell(dir, cell.id, outcome->measured, outcome->spread); !ok) {
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

// Every scenario's network, resolved once: the simulator's, and the workers' truth.
Result<std::vector<ScenarioNetwork>> networks_of(const Experiment& e) {
  std::vector<ScenarioNetwork> truths;
  for (const auto& s : e.scenarios) {
    auto t = scenario_network(s);
    if (!t) {
      return t.error();
    }
    truths.push_back(std::move(*t));
  }
  return truths;
}

// The folder opened and locked (held by the outcome, through the caller's report), its finished
// cells read, the truths written for the workers.
Result<Finished> open_folder(const Experiment& e, RunOptions& o, const std::vector<ScenarioNetwork>& truths,
                             const std::vector<Cell>& cells, RunOutcome& out) {
  auto dir = open_results(e, o);
  if (!dir) {
    return dir.error();
  }
  auto lock = lock_results_dir(*dir);
  if (!lock) {
    return lock.error();
  }
  std::set<std::string> ids;
  for (const Cell& cell : cells) {
    ids.insert(cell.id);
  }
  auto done = finished_cells(*dir, ids);
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
  out.dir = *dir;
  out.lock = std::move(*lock);
  return Finished{std::move(*done), {}};
}

// The summary of what finished, written, and a real run's calibration from it.
void conclude(const Experiment& e, const RunOptions& o, const std::vector<Cell>& cells,
              const std::vector<ScenarioNetwork>& truths, const Finished& finished, RunOutcome& out) {
  out.cells_done = finished.done.throughput.size();
  out.summary = summary_of(e, cells, finished.done, mode_of(o));
  static const std::vector<std::map<std::string, std::string>> kNoHosts;
  const auto& cluster_hosts = o.hosts ? o.hosts->fabric_hosts : kNoHosts;
  if (auto ok = write_summary(out.dir, e, out.summary, truths, cluster_hosts); !ok) {
    out.unsaved = ok.error();  // the caller still prints the table and how to resume (a full disk)
    return;
  }
  if (o.simulate) {
    return;
  }
  auto c = record_calibration(e, out.dir, cells, finished.done.throughput, out.summary, truths, finished.logs);
  if (c) {
    out.calibration = std::move(*c);
  } else {
    out.calibration_missing = c.error().message;
  }
}

}  // namespace

Result<RunOutcome> run_experiment(const Experiment& given, RunOptions o, const std::atomic<bool>& stop) {
  auto run = as_run(given, o);
  if (!run) {
    return run.error();
  }
  const Experiment& e = *run;
  if (auto ok = check_runnable_here(e, o); !ok) {
    return ok.error();
  }
  if (o.hosts) {
    if (auto ok = place_on_racks(e, *o.hosts); !ok) {
      return ok.error();
    }
  }
  auto truths = networks_of(e);
  if (!truths) {
    return truths.error();
  }
  for (std::size_t s = 0; o.simulate && s < truths->size(); ++s) {
    if (!(*truths)[s].closed_loop.empty()) {
      return make_error(Errc::kUnsupported, "scenario \"" + e.scenarios[s].name + "\" runs a closed-loop job (flow " +
                                                (*truths)[s].closed_loop + ", \"iterate\"): the simulator takes " +
                                                "a chain's flows as streams and cannot time a job's iterations " +
                                                "(a fabric's model replays them); run it real");
    }
  }
  RunOutcome out;
  const std::vector<Cell> cells = expand(e);
  auto finished = open_folder(e, o, *truths, cells, out);
  if (!finished) {
    return finished.error();
  }
  out.cells_total = cells.size();
  announce(e, o, cells.size(), out.dir);
  std::unique_ptr<KeepAwake> awake;
  if (o.keep_awake && !o.simulate && !o.hosts) {
    auto started = KeepAwake::start();
    if (!started) {
      return started.error();
    }
    awake = std::move(*started);
  }
  run_cells(e, cells, out.dir, o, *truths, *finished, out, stop);
  awake.reset();
  out.stopped = stop.load();
  conclude(e, o, cells, *truths, *finished, out);
  return out;
}

}  // namespace contend::runner
