// Fitting what a real run's cells measured: the latency per transfer and the line rate at which
// the simulator gives the throughput each scenario's baseline measured.

#include <cmath>
#include <limits>

#include "contend/common/units.h"
#include "contend/runner/simulated/calibration.h"
#include "results/throughput.h"
#include "simulated/calibration_fit.h"

namespace contend::runner {
namespace {

constexpr double kMaxLatencyS = 0.05;
constexpr double kMinLineBps = 1e8;  // the line rates fit_line_rate tries
constexpr double kMaxLineBps = 1e12;

}  // namespace

Result<double> fit_latency(const std::function<Result<double>(double)>& throughput_at, double measured) {
  auto none = throughput_at(0);
  if (!none) {
    return none.error();
  }
  if (*none <= measured) {
    return 0.0;
  }
  double lo = 0;
  double hi = kMaxLatencyS;
  for (int i = 0; i < 30 && hi - lo > 1e-7; ++i) {
    const double mid = 0.5 * (lo + hi);
    auto at = throughput_at(mid);
    if (!at) {
      return at.error();
    }
    (*at > measured ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Result<double> simulated_throughput(const SimCell& cell, const Workload& w,
                                    const std::optional<MeasureWindow>& window) {
  std::vector<std::pair<double, double>> rank0;
  for (const SimIteration& it : cell.iterations) {
    if (window || it.iteration >= w.warmup) {
      rank0.emplace_back(it.start_s, it.iteration_s);
    }
  }
  return iterations_throughput(rank0, w, window, 0, "the simulated cell");
}

Result<double> simulated_at(const Workload& w, const Calibration& c, const pipeline::ScheduleChoice& schedule,
                            const ScenarioNetwork& links, double latency_s,
                            const std::optional<MeasureWindow>& window) {
  const Workload calibrated = calibrated_workload(w, c);
  RuntimeModel runtime = c.runtime;
  runtime.latency_s = latency_s;
  auto run = simulate_cell(calibrated, schedule, links, runtime);
  if (!run) {
    return run.error();
  }
  return simulated_throughput(*run, calibrated, window);
}

Result<double> fit_cell(const Workload& w, const Calibration& c, const pipeline::ScheduleChoice& schedule,
                        const ScenarioNetwork& links, double measured, const std::optional<MeasureWindow>& window) {
  return fit_latency([&](double l) { return simulated_at(w, c, schedule, links, l, window); }, measured);
}

namespace {

// A latency that explains a run's scenarios: `error` is the sum of squared relative errors of the
// simulated baseline against the measured medians; `fitted` names each scenario's own fit.
struct ScenarioFit {
  double latency_s = 0;
  double error = std::numeric_limits<double>::infinity();
  std::string fitted;
};

// Of the latencies fitted per scenario under `c`'s costs and line rate, the one that explains
// every scenario best: the least error. A noisy scenario's fit is outvoted rather than averaged in.
Result<ScenarioFit> fit_scenarios(const Workload& w, const Calibration& c, const pipeline::ScheduleChoice& baseline,
                                  const std::vector<MeasuredScenario>& medians,
                                  const std::optional<MeasureWindow>& window) {
  ScenarioFit best;
  std::vector<double> latencies;
  for (const MeasuredScenario& s : medians) {
    auto latency = fit_cell(w, c, baseline, *s.links, s.throughput, window);
    if (!latency) {
      return with_context(latency.error(), "fitting the latency on " + s.name);
    }
    latencies.push_back(*latency);
    best.fitted += (best.fitted.empty() ? "" : ", ") + s.name + " " + format_seconds(*latency);
  }
  for (const double latency : latencies) {
    double error = 0;
    for (const MeasuredScenario& s : medians) {
      auto at = simulated_at(w, c, baseline, *s.links, latency, window);
      if (!at) {
        return at.error();
      }
      error += std::pow(*at / s.throughput - 1, 2);
    }
    if (error < best.error) {
      best.latency_s = latency;
      best.error = error;
    }
  }
  return best;
}

// The line rates a run's calibration tries, fastest first: none (0: a shaper's burst crosses at
// once), then kLinesPerDecade a decade from kMaxLineBps down to kMinLineBps.
constexpr int kLinesPerDecade = 8;
std::vector<double> candidate_line_rates() {
  std::vector<double> out{0.0};
  const int steps = static_cast<int>(std::lround(std::log10(kMaxLineBps / kMinLineBps) * kLinesPerDecade));
  for (int i = 0; i <= steps; ++i) {
    out.push_back(kMaxLineBps / std::pow(10.0, static_cast<double>(i) / kLinesPerDecade));
  }
  return out;
}

// A line rate is kept over a faster one only when it explains the scenarios better by this much
// (the error, a sum of squared relative errors: 1e-5 is 0.3% on one scenario). One scenario is
// explained by a latency alone at every line rate: it keeps none.
constexpr double kBetterFit = 1e-5;

}  // namespace

Result<Calibration> calibrate_from_run(const Workload& w, const pipeline::ScheduleChoice& baseline,
                                       const std::vector<IterationLog>& metrics,
                                       const std::vector<MeasuredScenario>& medians,
                                       const std::optional<MeasureWindow>& window, double start_s) {
  auto c = measured_costs(w, metrics);
  if (!c) {
    return c.error();
  }
  c->runtime.start_s = start_s;
  if (medians.empty()) {
    return make_error(Errc::kInvalidArgument, "no finished cell of " + baseline.spec.str() + " to fit the latency on");
  }
  ScenarioFit best;
  for (const double line : candidate_line_rates()) {
    Calibration at = *c;
    at.runtime.line_bps = line;
    auto fit = fit_scenarios(w, at, baseline, medians, window);
    if (!fit) {
      return fit.error();
    }
    if (fit->error < best.error - kBetterFit) {
      best = *fit;
      c->runtime.line_bps = line;
    }
  }
  c->runtime.latency_s = best.latency_s;
  c->source = "recorded by a real run: costs from " + std::to_string(metrics.size()) + " cells of " +
              baseline.spec.str() + ", latency the fit per scenario (" + best.fitted +
              ") that explains all of them best, " +
              (c->runtime.line_bps > 0 ? "at the line rate that does (" + format_rate(c->runtime.line_bps) + ")"
                                       : "with no line rate");
  return c;
}

Result<double> fit_line_rate(const std::function<Result<double>(double)>& throughput_at, double measured) {
  auto fastest = throughput_at(kMaxLineBps);
  if (!fastest) {
    return fastest.error();
  }
  if (*fastest <= measured) {
    return 0.0;
  }
  double lo = std::log(kMinLineBps);
  double hi = std::log(kMaxLineBps);
  for (int i = 0; i < 40 && hi - lo > 1e-4; ++i) {
    const double mid = 0.5 * (lo + hi);
    auto at = throughput_at(std::exp(mid));
    if (!at) {
      return at.error();
    }
    (*at < measured ? lo : hi) = mid;
  }
  return std::exp(0.5 * (lo + hi));
}
}  // namespace contend::runner
