#include "contend/runner/simulated/calibration.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/keep_awake.h"
#include "contend/common/records.h"
#include "contend/common/units.h"
#include "contend/runner/results/throughput.h"

namespace contend::runner {
namespace {

constexpr double kMaxLatencyS = 0.05;
constexpr double kUnlimitedBps = 1e15;  // loopback, as the simulator sees it
constexpr double kMinLineBps = 1e8;     // the line rates fit_line_rate tries
constexpr double kMaxLineBps = 1e12;

// Sums over every measured rank line of the files: the calibration's inputs.
struct Totals {
  double forward_s = 0;
  double backward_s = 0;
  double microbatches = 0;  // per rank line: the workload's m
  double send_s = 0;
  double sends = 0;
  double iteration_cost_s = 0;
  double lines = 0;
};

// Adds the measured iterations of `log` (the warm-up's and lines without the runtime's timings
// left out) to `t`; kParse naming the line where one has some of the timings but not all.
Result<void> add_log(const IterationLog& log, const Workload& w, Totals& t) {
  for (const IterationLine& line : log.lines) {
    if (!line.iteration || *line.iteration < w.warmup || !(line.timings || line.partial_timings)) {
      continue;
    }
    if (line.partial_timings) {
      return make_error(Errc::kParse, log.path + ":" + std::to_string(line.number) +
                                          ": an iteration line without the runtime's timings (forward_s, "
                                          "backward_s, send_wait_s, flush_s, step_s)");
    }
    const RuntimeTimings& r = *line.timings;
    t.forward_s += r.forward_s;
    t.backward_s += r.backward_s;
    t.send_s += r.send_wait_s - r.flush_s;
    t.sends += r.sends;
    t.iteration_cost_s += r.flush_s + r.step_s;
    t.microbatches += w.microbatches;
    t.lines += 1;
  }
  return {};
}

// The version calibration.json has: 2 records the workload as its members (stage_costs_json),
// where 1 had a sentence.
constexpr int kCalibrationVersion = 2;

// A calibration of version 1 is refused with what to do: its workload cannot be compared.
Result<void> older_calibration(const std::string& text, const std::string& path) {
  auto json = parse_json(text, path);
  if (json && json->is_object() && json->value("schema", "") == "contend.calibration/1") {
    return make_error(Errc::kInvalidArgument,
                      path +
                          " is a calibration of an earlier contend (contend.calibration/1), whose workload "
                          "cannot be compared with this one's: measure it again (a real contend run records "
                          "calibration.json; --calibration host measures one here)");
  }
  return {};
}

}  // namespace

Workload calibrated_workload(const Workload& w, const Calibration& c) {
  Workload out = w;
  if (c.forward_s > 0) {
    out.emulated.forward = std::chrono::round<std::chrono::nanoseconds>(std::chrono::duration<double>(c.forward_s));
    out.emulated.backward = std::chrono::round<std::chrono::nanoseconds>(std::chrono::duration<double>(c.backward_s));
  }
  return out;
}

Result<Calibration> measured_costs(const Workload& w, const std::vector<IterationLog>& logs) {
  Totals t;
  for (const IterationLog& log : logs) {
    if (auto ok = add_log(log, w, t); !ok) {
      return ok.error();
    }
  }
  if (t.lines == 0) {
    return make_error(Errc::kParse, "no measured iteration with the runtime's timings in " +
                                        std::to_string(logs.size()) + " iteration logs");
  }
  Calibration c;
  c.forward_s = t.forward_s / t.microbatches;
  c.backward_s = t.backward_s / t.microbatches;
  c.runtime.costs.send_s = t.sends > 0 ? t.send_s / t.sends : 0;
  c.runtime.costs.iteration_s = t.iteration_cost_s / t.lines;
  c.workload = pipeline::stage_costs_json(w);
  return c;
}

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

namespace {

// `schedule` simulated on `links` under `c`'s costs with `latency_s` per transfer.
Result<double> simulated_at(const Workload& w, const Calibration& c, const Spec& schedule, const ScenarioNetwork& links,
                            double latency_s, const std::optional<MeasureWindow>& window) {
  const Workload calibrated = calibrated_workload(w, c);
  RuntimeModel runtime = c.runtime;
  runtime.latency_s = latency_s;
  auto run = simulate_cell(calibrated, schedule, links, runtime);
  if (!run) {
    return run.error();
  }
  return simulated_throughput(*run, calibrated, window);
}

// The latency at which `schedule` simulated on `links` under `c`'s costs gives `measured`.
Result<double> fit_cell(const Workload& w, const Calibration& c, const Spec& schedule, const ScenarioNetwork& links,
                        double measured, const std::optional<MeasureWindow>& window) {
  return fit_latency([&](double l) { return simulated_at(w, c, schedule, links, l, window); }, measured);
}

// A latency that explains a run's scenarios: `error` is the sum of squared relative errors of the
// simulated baseline against the measured medians; `fitted` names each scenario's own fit.
struct ScenarioFit {
  double latency_s = 0;
  double error = std::numeric_limits<double>::infinity();
  std::string fitted;
};

// Of the latencies fitted per scenario under `c`'s costs and line rate, the one that explains
// every scenario best: the least error. A noisy scenario's fit is outvoted rather than averaged in.
Result<ScenarioFit> fit_scenarios(const Workload& w, const Calibration& c, const Spec& baseline,
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

Result<Calibration> calibrate_from_run(const Workload& w, const Spec& baseline,
                                       const std::vector<IterationLog>& metrics,
                                       const std::vector<MeasuredScenario>& medians,
                                       const std::optional<MeasureWindow>& window, double start_s) {
  auto c = measured_costs(w, metrics);
  if (!c) {
    return c.error();
  }
  c->runtime.start_s = start_s;
  if (medians.empty()) {
    return make_error(Errc::kInvalidArgument, "no finished cell of " + baseline.str() + " to fit the latency on");
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
  c->source = "recorded by a real run: costs from " + std::to_string(metrics.size()) + " cells of " + baseline.str() +
              ", latency the fit per scenario (" + best.fitted + ") that explains all of them best, " +
              (c->runtime.line_bps > 0 ? "at the line rate that does (" + format_rate(c->runtime.line_bps) + ")"
                                       : "with no line rate");
  return c;
}

namespace {

// Tensors this small cross loopback in microseconds: a probe with them times the runtime's fixed
// cost per transfer alone.
constexpr std::uint64_t kSmallTensorBytes = 4096;

PipelineLinks loopback_links(int stages, double bps) {
  PipelineLinks links;
  for (int r = 0; r + 1 < stages; ++r) {
    links.emplace(std::pair{r, r + 1}, RateTrace::constant(bps));
  }
  return links;
}

// `e`'s workload with `activation_bytes` tensors, run as 1F1B by stage-many workers over loopback
// for a few iterations in a scratch folder (removed after).
Result<LoopbackProbe> probe_loopback(const Experiment& e, std::uint64_t activation_bytes, const LaunchOptions& launch) {
  Experiment probe = e;
  probe.workload.warmup = 1;
  probe.workload.iterations = 5;
  probe.workload.emulated.activation_bytes = activation_bytes;
  const Cell cell{0,     pipeline::parse_schedule_or_policy("1f1b").value(), 0, "calibration", e.workload.transport,
                  "1f1b"};
  char dir_template[] = "/tmp/contend-calibration-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    return make_error(Errc::kIo, std::string("cannot create a folder in /tmp: ") + std::strerror(errno));
  }
  const std::string dir = dir_template;
  struct Remove {
    std::string dir;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove{dir};
  const CellFiles files{dir + "/metrics.jsonl", "", dir + "/workers.log", "", ""};
  const std::atomic<bool> never{false};
  const double launched = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (auto ok = run_cell_loopback(probe, cell, files, launch, never); !ok) {
    return with_context(ok.error(), "calibrating on this host");
  }
  auto log = read_iteration_log(files.metrics);
  if (!log) {
    return log.error();
  }
  auto c = measured_costs(probe.workload, {*log});
  auto measured = cell_throughput(*log, probe.workload);
  auto start = first_iteration_s(*log, launched);
  if (!c || !measured || !start) {
    return !c ? c.error() : !measured ? measured.error() : start.error();
  }
  c->runtime.start_s = std::max(0.0, *start);  // the workers' start-up: a real cell's, but for the shaper
  return LoopbackProbe{probe.workload, std::move(*c), *measured};
}

}  // namespace

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

Result<Calibration> fit_loopback(const LoopbackProbe& small, const LoopbackProbe& full) {
  const Spec one_f_one_b = pipeline::parse_schedule_or_policy("1f1b").value();
  const int stages = full.workload.stages;
  auto latency = fit_cell(small.workload, small.costs, one_f_one_b, loopback_links(stages, kUnlimitedBps),
                          small.throughput, std::nullopt);
  if (!latency) {
    return latency.error();
  }
  Calibration c = full.costs;
  c.runtime.latency_s = *latency;
  auto line = fit_line_rate(
      [&](double bps) {
        Calibration at = c;
        at.runtime.line_bps = bps;
        return simulated_at(full.workload, at, one_f_one_b, loopback_links(stages, bps), *latency, std::nullopt);
      },
      full.throughput);
  if (!line) {
    return line.error();
  }
  c.runtime.line_bps = *line;
  return c;
}

Result<Calibration> measure_on_host(const Experiment& e, const LaunchOptions& launch) {
  if (pipeline::transports().find(e.workload.transport)->kind.needs_device ||
      pipeline::backends().find(e.workload.backend)->kind.needs_device) {
    return make_error(Errc::kInvalidArgument,
                      "a calibration on this host runs stages and a transport that need "
                      "no device (" +
                          e.workload.backend.str() + " over " + e.workload.transport.str() +
                          " do); record one with a real run instead");
  }
  // The probes' ranks sleep through their emulated compute and wait for each other's tensors: on a
  // virtual machine with idle CPUs each wake-up also waits for the hypervisor, by as much as the
  // host's other tenants make it (the latency fitted here ranged 110-272 us run to run), so the
  // probes run with every CPU kept awake and measure this machine, not its neighbours' load.
  auto awake = KeepAwake::start();
  if (!awake) {
    return with_context(awake.error(), "calibrating on this host");
  }
  auto small = probe_loopback(e, std::min(kSmallTensorBytes, e.workload.emulated.activation_bytes), launch);
  if (!small) {
    return small.error();
  }
  auto full = probe_loopback(e, e.workload.emulated.activation_bytes, launch);
  if (!full) {
    return full.error();
  }
  auto c = fit_loopback(*small, *full);
  if (!c) {
    return with_context(c.error(), "calibrating on this host");
  }
  c->source = "measured on this host: 1F1B over loopback, " + std::to_string(e.workload.stages) + " ranks, " +
              std::to_string(full->workload.iterations) + " iterations with " + format_size(kSmallTensorBytes) +
              " tensors (the latency) and with the workload's (loopback's rate for them, the line rate), every "
              "CPU kept awake";
  return c;
}

Result<void> write_calibration(const std::string& path, const Calibration& c) {
  nlohmann::ordered_json doc = json_document("calibration", kCalibrationVersion);
  doc["source"] = c.source;
  doc["workload"] = c.workload;
  doc["forward_s"] = c.forward_s;
  doc["backward_s"] = c.backward_s;
  doc["send_s"] = c.runtime.costs.send_s;
  doc["iteration_cost_s"] = c.runtime.costs.iteration_s;
  doc["latency_s"] = c.runtime.latency_s;
  doc["line_bps"] = c.runtime.line_bps;
  doc["start_s"] = c.runtime.start_s;
  return write_json_document(path, doc);
}

Result<Calibration> read_calibration(const std::string& path, const Workload& w) {
  auto text = read_json_text(path, "a calibration file");
  if (!text) {
    return text.error();
  }
  if (auto old = older_calibration(*text, path); !old) {
    return old.error();
  }
  auto json = parse_document(*text, path, "calibration", kCalibrationVersion,
                             {"source", "workload", "forward_s", "backward_s", "send_s", "iteration_cost_s",
                              "latency_s", "line_bps", "start_s"});
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, path);
  Calibration c;
  auto source = r.string("source");
  if (!source) {
    return source.error();
  }
  c.source = *source;
  if (!r.at("workload").json().is_object()) {
    return r.error_at("workload", "expected the workload's members (an object)");
  }
  c.workload = r.at("workload").json();
  struct Field {
    const char* key;
    double* out;
    bool required;
    double max;
    const char* expected;
  };
  constexpr const char* kSeconds = "expected seconds from 0 to 3600";
  for (const Field& f :
       {Field{"forward_s", &c.forward_s, true, 3600, kSeconds},
        Field{"backward_s", &c.backward_s, true, 3600, kSeconds},
        Field{"send_s", &c.runtime.costs.send_s, true, 3600, kSeconds},
        Field{"iteration_cost_s", &c.runtime.costs.iteration_s, true, 3600, kSeconds},
        Field{"latency_s", &c.runtime.latency_s, true, 3600, kSeconds},
        Field{"line_bps", &c.runtime.line_bps, false, 1e15, "expected bits per second from 0 (unlimited) to 1e15"},
        Field{"start_s", &c.runtime.start_s, false, 3600, kSeconds}}) {
    if (!f.required && !r.has(f.key)) {
      continue;
    }
    auto v = r.number(f.key);
    if (!v) {
      return v.error();
    }
    if (!std::isfinite(*v) || *v < 0 || *v > f.max) {
      return r.error_at(f.key, f.expected);
    }
    *f.out = *v;
  }
  if (c.workload != nlohmann::json(pipeline::stage_costs_json(w))) {
    return make_error(Errc::kInvalidArgument, path + " was measured for another workload (" + c.workload.dump() +
                                                  "); this experiment runs " + pipeline::stage_costs_json(w).dump());
  }
  return c;
}

}  // namespace contend::runner
