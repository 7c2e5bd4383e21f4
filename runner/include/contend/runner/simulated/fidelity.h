#pragma once
// How far to trust a simulated run: the fidelity suite's measurements (experiments/suites/fidelity/fidelity-*.json
// run real and simulated by bench/fidelity_suite.sh, recorded in experiments/suites/fidelity/measured.json,
// contend.fidelity/1, docs/fidelity.md) and, for a configuration, the measured cell
// nearest to it. What a cell varies is derived from its experiment and scenario files by
// fidelity_config, the same function for the suite's cells and for the user's, so the two are
// compared on the same terms. Not thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::runner {

// What a (scenario, schedule) cell varies that the simulator's accuracy depends on.
struct FidelityConfig {
  int stages = 0;
  int microbatches = 0;
  double activation_bytes = 0;
  double compute_s = 0;       // forward + backward of one micro-batch
  double slowest_bps = 0;     // the chain's lowest workload goodput over the scenario
  bool rate_changes = false;  // the timeline changes a rate (caps, ramps, traces, preemption)
  bool tcp_flow = false;      // background flows of each protocol on a chain link
  bool udp_flow = false;
  bool stall = false;        // PipeMorph's stragglers
  bool closed_loop = false;  // beside a job whose traffic follows its own iterations ("iterate")
  std::string preemption;    // of the links flows run on ("fair", ...); "" without flows
  std::string schedule;      // the schedule's spec, as results name it
  bool policy = false;       // the schedule is a policy (adaptive, adaptra, oracle)
};

// Simulated / real throughput of one cell of the suite, per calibration; 0 where not measured.
struct FidelityCell {
  std::string experiment;  // the suite's file, relative to the measurements' folder
  std::string scenario;
  std::string schedule;
  double real = 0;  // samples/s, the real run's median
  double ideal = 0;
  double host = 0;        // --calibration host
  double own = 0;         // --calibration with the real run's own calibration.json
  FidelityConfig config;  // filled by load_fidelity from the files
};

struct FidelityTable {
  std::string measured;  // when, where and with what it was measured
  std::vector<FidelityCell> cells;
};

// The measurements in `path` (contend.fidelity/1), each cell's configuration derived from its
// experiment (relative to `path`'s folder, where the suite lies). A cell naming a
// scenario or schedule its experiment lacks is refused.
Result<FidelityTable> load_fidelity(const std::string& path);
// The measurements alone, without the files (what load_fidelity reads first).
Result<FidelityTable> parse_fidelity(const std::string& text, const std::string& source);

FidelityConfig fidelity_config(const Workload& w, const emulator::Scenario& s, const std::string& schedule,
                               bool policy);

// How unlike two configurations are: 0 for the same; each doubling of a size, a rate or a count
// adds 1, a schedule, a kind of network change or a preemption policy not shared adds more.
double fidelity_distance(const FidelityConfig& a, const FidelityConfig& b);

// The suite's cell nearest to `c`; nullptr for an empty table.
const FidelityCell* nearest_cell(const FidelityTable& t, const FidelityConfig& c);

// What --simulate prints beside its table: per (scenario, schedule) of `e`, the nearest measured
// cell and its simulated / real ratio under `calibration` ("ideal", "host" or "own").
std::string fidelity_note(const FidelityTable& t, const Experiment& e, const std::string& calibration);

}  // namespace contend::runner
