#include "simulated/simulated_cell.h"

#include <algorithm>
#include <set>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/records.h"
#include "contend/emulator/event_record.h"
#include "contend/pipeline/exec/worker.h"
#include "contend/sim/chrome_trace.h"
#include "results/throughput.h"
#include "simulated/simulated_tenants.h"

namespace contend::runner {

namespace {

// events/CELL.jsonl of a simulated cell: the scenario's events as the player logs them, each
// applied when it was scheduled, and on a fabric each flow's summary as the model predicts it.
Result<void> write_simulated_events(const std::string& path, const emulator::Scenario& scenario, const SimCell& sim,
                                    double end_s) {
  auto log = JsonLinesWriter::open(path, "contend.events/1", JsonLinesWriter::Mode::kCreate);
  if (!log) {
    return log.error();
  }
  nlohmann::ordered_json base = nlohmann::ordered_json::object();
  for (const auto& l : scenario.links) {
    base[l.name] = l.rate_bps;
  }
  std::vector<nlohmann::ordered_json> lines = {{{"kind", "start"},
                                                {"scenario", scenario.name},
                                                {"simulated", true},
                                                {"steady_s", 0.0},
                                                {"duration_s", scenario.duration_s},
                                                {"base_rates_bps", base}}};
  for (const auto& ev : scenario.events) {
    nlohmann::ordered_json line = emulator::event_record(ev);
    line["applied_s"] = ev.at_s;  // the simulator applies every event on time
    lines.push_back(std::move(line));
  }
  for (nlohmann::ordered_json& summary : simulated_flow_summaries(scenario, sim)) {
    lines.push_back(std::move(summary));
  }
  lines.push_back({{"kind", "end"}, {"t_s", end_s}});
  for (const auto& line : lines) {
    if (auto ok = (*log)->write(line); !ok) {
      return ok;
    }
  }
  return {};
}

nlohmann::ordered_json simulated_record(const Experiment& e, const Cell& cell, const SimIteration& row) {
  nlohmann::ordered_json doc;
  doc["rank"] = 0;
  doc["iteration"] = row.iteration;
  doc["schedule"] = cell.schedule.str();
  doc["k"] = row.k;
  doc["backend"] = "simulated";
  doc["start_s"] = row.start_s;
  doc["iteration_s"] = row.iteration_s;
  doc["samples_per_s"] = e.workload.samples_per_iteration() / row.iteration_s;
  doc["compute_s"] = row.compute_s;
  doc["peak_activation_bytes"] = row.peak_activation_bytes;
  if (row.decision) {
    doc["decision"] = pipeline::decision_record(cell.schedule.name(), *row.decision);
  }
  if (!row.shadows.empty()) {
    nlohmann::ordered_json shadows = nlohmann::ordered_json::object();
    for (const ShadowIteration& shadow : row.shadows) {
      nlohmann::ordered_json one = pipeline::decision_record(shadow.policy, shadow.decision);
      one["iteration_s"] = shadow.iteration_s;
      shadows[shadow.policy] = std::move(one);
    }
    doc["shadows"] = std::move(shadows);
  }
  return doc;
}

}  // namespace

// Writes a simulated cell as a real one is written: the runtime's rank-0 lines (backend
// "simulated"), the scenario's events as the player logs them, and the last iteration's trace.
Result<void> write_simulated_cell(const CellFiles& files, const std::string& trace_path, const Experiment& e,
                                  const Cell& cell, const SimCell& sim) {
  const auto& rows = sim.iterations;
  const double end = rows.empty() ? 0 : rows.back().start_s + rows.back().iteration_s;
  if (auto ok = write_simulated_events(files.events, e.scenarios[cell.scenario], sim, end); !ok) {
    return ok;
  }
  if (!trace_path.empty()) {
    if (auto ok = write_file_atomic(trace_path, sim::chrome_trace_json(sim.last)); !ok) {
      return ok;
    }
  }
  auto runs = JsonLinesWriter::open(files.metrics, "contend.iteration/1", JsonLinesWriter::Mode::kCreate);
  if (!runs) {
    return runs.error();
  }
  for (const auto& row : rows) {
    if (auto ok = (*runs)->write(simulated_record(e, cell, row)); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace contend::runner
