#include "run/record_calibration.h"

#include <algorithm>

#include "results/throughput.h"
#include "run/results_folder.h"

namespace contend::runner {
namespace {

// The baseline's finished cells' iteration logs: as this run read them, else read here (a cell an
// earlier run finished); and when each started its first iteration on the scenario's clock.
struct BaselineCells {
  std::vector<IterationLog> logs;
  std::vector<double> starts;
};

Result<BaselineCells> baseline_cells(const Experiment& e, const std::string& dir, const std::vector<Cell>& cells,
                                     const std::map<std::string, double>& done,
                                     const std::map<std::string, IterationLog>& logs) {
  BaselineCells out;
  for (const Cell& cell : cells) {
    if (cell.name != e.baseline || done.count(cell.id) == 0) {
      continue;
    }
    const CellFiles files = files_of(dir, e, cell);
    const auto it = logs.find(cell.id);
    auto log = it != logs.end() ? Result<IterationLog>(it->second) : read_iteration_log(files.metrics);
    if (!log) {
      return log.error();
    }
    auto clock = scenario_clock(files.events);
    auto start = clock ? first_iteration_s(*log, clock->zero_s) : Result<double>(clock.error());
    if (start) {
      out.starts.push_back(*start);
    }
    out.logs.push_back(std::move(*log));
  }
  return out;
}

// Per scenario, the baseline's measured median there and the scenario's network; not where a
// closed-loop job runs, which the simulator cannot time.
std::vector<MeasuredScenario> baseline_medians(const Experiment& e, const Summary& summary,
                                               const std::vector<ScenarioNetwork>& truths) {
  std::vector<MeasuredScenario> medians;
  for (std::size_t s = 0; s < e.scenarios.size(); ++s) {
    if (!e.scenarios[s].closed_loop_flow().empty()) {  // its tenant's timing is the run's, not the model's
      continue;
    }
    for (const CellSummary& c : summary.cells) {
      if (c.scenario == e.scenarios[s].name && c.schedule == e.baseline && !c.throughput.empty()) {
        medians.push_back({c.scenario, &truths[s], c.stats.median});
      }
    }
  }
  return medians;
}

}  // namespace

Result<Calibration> record_calibration(const Experiment& e, const std::string& dir, const std::vector<Cell>& cells,
                                       const std::map<std::string, double>& done, const Summary& summary,
                                       const std::vector<ScenarioNetwork>& truths,
                                       const std::map<std::string, IterationLog>& logs) {
  if (e.job) {
    return make_error(Errc::kUnsupported, "a user's job is not contend's pipeline, which the simulator models");
  }
  auto baseline = baseline_cells(e, dir, cells, done, logs);
  if (!baseline) {
    return baseline.error();
  }
  const auto base = std::find_if(e.schedules.begin(), e.schedules.end(),
                                 [&](const ScheduleEntry& s) { return s.name == e.baseline; });
  Workload w = e.workload;
  w.transport = base->transport.value_or(w.transport);
  auto c = calibrate_from_run(w, base->schedule, baseline->logs, baseline_medians(e, summary, truths), e.measure,
                              stats_of(baseline->starts).median);
  if (!c) {
    return c.error();
  }
  c->source += ", in " + dir;
  if (auto ok = write_calibration(dir + "/calibration.json", *c); !ok) {
    return ok.error();
  }
  return c;
}

}  // namespace contend::runner
