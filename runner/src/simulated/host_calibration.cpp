// A host's calibration: the workload probed over loopback by `contend worker` processes, no
// shaping, no root.

#include <chrono>
#include <filesystem>

#include "contend/common/keep_awake.h"
#include "contend/common/units.h"
#include "contend/runner/simulated/calibration.h"
#include "results/throughput.h"
#include "simulated/calibration_fit.h"

namespace contend::runner {
namespace {

// Tensors this small cross loopback in microseconds: a probe with them times the runtime's fixed
// cost per transfer alone.
constexpr std::uint64_t kSmallTensorBytes = 4096;

constexpr double kUnlimitedBps = 1e15;  // loopback, as the simulator sees it

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

Result<Calibration> fit_loopback(const LoopbackProbe& small, const LoopbackProbe& full) {
  const int stages = full.workload.stages;
  auto one_f_one_b = pipeline::resolve_schedule(pipeline::parse_schedule_or_policy("1f1b").value(), stages,
                                                full.workload.microbatches);
  if (!one_f_one_b) {
    return one_f_one_b.error();
  }
  auto latency = fit_cell(small.workload, small.costs, *one_f_one_b, loopback_links(stages, kUnlimitedBps),
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
        return simulated_at(full.workload, at, *one_f_one_b, loopback_links(stages, bps), *latency, std::nullopt);
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

}  // namespace contend::runner
