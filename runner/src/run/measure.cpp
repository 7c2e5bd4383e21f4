#include "run/measure.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "contend/common/cpu_times.h"
#include "contend/common/units.h"
#include "contend/runner/hosts/hosts.h"
#include "contend/runner/simulated/calibration.h"
#include "contend/runner/simulated/simulate.h"
#include "job/job_cell.h"
#include "job/job_log.h"
#include "run/results_folder.h"
#include "simulated/simulated_cell.h"

namespace contend::runner {
namespace {

// Runs one cell into `files`: simulated, on hosts, or in namespaces here.
Result<void> run_one(const Experiment& e, const Cell& cell, const CellFiles& files, const RunOptions& o,
                     const ScenarioNetwork& truth, const std::atomic<bool>& stop) {
  if (o.simulate) {
    const Calibration none;
    const Calibration& c = o.calibration ? *o.calibration : none;
    Workload w = calibrated_workload(e.workload, c);
    w.transport = cell.transport;
    auto rows = simulate_cell(w, schedule_of(e, cell), truth, c.runtime, o.shadows);
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

// A cell interrupted before runs again from scratch: what an earlier attempt left is removed, its
// rank logs too (they are read for the first to fail, on one host or many).
void remove_stale(const Experiment& e, const Cell& cell, const CellFiles& files) {
  std::vector<std::string> stale = {files.metrics, files.events, files.log};
  for (int r = 0; e.job && r < static_cast<int>(e.scenarios[cell.scenario].nodes.size()); ++r) {
    stale.push_back(rank_log_path(files.log, r));
  }
  std::error_code ec;
  for (const std::string& path : stale) {
    std::filesystem::remove(path, ec);
  }
}

// How even the iterations were; one many times the median is said (a worker stopped, a stalled
// machine: the cell counts it, and its record shows it).
IterationSpread spread_of(const IterationLog& log, const Workload& w, const std::string& id) {
  constexpr double kStalled = 5;
  const IterationSpread spread = iteration_spread(log, w);
  if (spread.median_s > 0 && spread.slowest_s > kStalled * spread.median_s) {
    std::fprintf(stderr,
                 "contend run: %s: iteration %d took %s, %.0fx the median %s (was a worker stopped, or the machine "
                 "stalled?); the cell counts it\n",
                 id.c_str(), spread.slowest, format_seconds(spread.slowest_s).c_str(),
                 spread.slowest_s / spread.median_s, format_seconds(spread.median_s).c_str());
  }
  return spread;
}

// What a cell run here put on the links (its events log's samples); a user's job whose data went
// around them is refused.
Result<std::vector<PortBytes>> read_link_bytes(const Experiment& e, const Cell& cell, const CellFiles& files) {
  auto ports = port_bytes(files.events);
  if (!ports) {
    return ports.error();
  }
  if (e.job) {
    if (auto ok = check_links_carried(*e.job, e.scenarios[cell.scenario], *ports); !ok) {
      return ok.error();
    }
  }
  return ports;
}

// What the cell's files say it measured: a pipeline's throughput from its iteration log (read
// here, once), a user's job's from its rank log (its steps written beside it).
Result<CellOutcome> read_outcome(const Experiment& e, const Cell& cell, const CellFiles& files) {
  CellOutcome out;
  if (e.job) {
    auto throughput = job_throughput(*e.job, files.log, e.measure, files.events);
    if (!throughput) {
      return throughput.error();
    }
    if (auto ok = write_job_steps(*e.job, files.log, files.events, job_steps_path(files.log)); !ok) {
      return ok.error();
    }
    out.measured.throughput = *throughput;
    return out;
  }
  auto log = read_iteration_log(files.metrics);
  if (!log) {
    return log.error();
  }
  auto throughput = cell_throughput(*log, e.workload, e.measure, files.events);
  if (!throughput) {
    return throughput.error();
  }
  out.measured.throughput = *throughput;
  out.spread = spread_of(*log, e.workload, cell.id);
  out.log = std::move(*log);
  return out;
}

// The machine's CPU counters and this process tree's CPU time, read together.
struct CpuReading {
  CpuTimes machine;
  double own_s = 0;
};
std::optional<CpuReading> cpu_now() {
  auto t = read_cpu_times();
  return t ? std::optional<CpuReading>(CpuReading{*t, own_cpu_seconds()}) : std::nullopt;
}

// What the hypervisor and processes outside this run took of this machine's CPU since `before`.
void record_cpu_since(const std::optional<CpuReading>& before, MeasuredCell& out) {
  const std::optional<CpuReading> after = cpu_now();
  if (!before || !after) {
    return;
  }
  out.steal = steal_share(before->machine, after->machine);
  out.others_cpu = others_share(before->machine, after->machine, after->own_s - before->own_s,
                                static_cast<double>(::sysconf(_SC_CLK_TCK)));
}

// A cell that lost much of the CPU to the hypervisor or to other processes is said (its record
// keeps both either way).
void say_cpu(const Cell& cell, const MeasuredCell& m, const RunOptions& o) {
  constexpr double kSaid = 0.10;  // costs a few percent of a cell's throughput (docs/experiment-format.md)
  if (m.steal.value_or(0) > kSaid) {
    std::fprintf(stderr,
                 "contend run: %s: the hypervisor took %.1f%% of this machine's CPU while it ran (steal); the cell "
                 "counts it, but every process of it waited meanwhile%s\n",
                 cell.id.c_str(), 100 * *m.steal, o.keep_awake ? "" : " (--keep-awake keeps the CPUs from idling)");
  }
  if (m.others_cpu.value_or(0) > kSaid) {
    std::fprintf(stderr,
                 "contend run: %s: processes outside this run took %.1f%% of this machine's CPU while it ran: a busy "
                 "machine, whose noise the cell's numbers carry\n",
                 cell.id.c_str(), 100 * *m.others_cpu);
  }
}

// Whether every character of `path` is one no shell reads as anything but itself.
bool shell_plain(const std::string& path) {
  return std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_./+,:=@%~-").find(c) != std::string_view::npos;
  });
}

// A job whose command hands {out} (a folder of the results) to what may be a shell line ("bash",
// "-c", "... {out}"): the results folder's path must hold nothing a shell would run.
Result<void> check_out_placeholder(const Experiment& e, const RunOptions& o) {
  if (!e.job || !uses_placeholder(*e.job, "{out}")) {
    return {};
  }
  const std::string named = !o.resume.empty() ? o.resume : !o.out.empty() ? o.out : "results/" + e.name;
  const std::string path = std::filesystem::absolute(named).string();
  if (shell_plain(path)) {
    return {};
  }
  return make_error(Errc::kInvalidArgument,
                    "the job's command uses {out}, a folder under the results folder " + path +
                        ", whose path has characters a shell would read (a command that passes {out} through a "
                        "shell would run them): choose a folder whose path has letters, digits and _./+,:=@%~- only");
}

}  // namespace

Result<void> check_runnable_here(const Experiment& e, const RunOptions& o) {
  if (auto ok = check_out_placeholder(e, o); !ok) {
    return ok;
  }
  if (e.job && o.simulate) {
    return make_error(Errc::kInvalidArgument, e.source +
                                                  ": a command experiment runs a user's job, which the "
                                                  "simulator cannot model; run it without --simulate");
  }
  std::error_code ec;
  if (e.job && !o.hosts && !workdir_is_template(*e.job) && !std::filesystem::is_directory(e.job->workdir, ec)) {
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

Result<CellOutcome> measure_cell(const Experiment& e, const Cell& cell, const std::string& dir, const RunOptions& o,
                                 const ScenarioNetwork& truth, const std::atomic<bool>& stop) {
  const CellFiles files = files_of(dir, e, cell);
  remove_stale(e, cell, files);
  const std::optional<CpuReading> before = o.simulate || o.hosts ? std::nullopt : cpu_now();
  if (auto ok = run_one(e, cell, files, o, truth, stop); !ok) {
    return ok.error();
  }
  MeasuredCell cpu;
  record_cpu_since(before, cpu);
  auto outcome = read_outcome(e, cell, files);
  if (!outcome) {
    return outcome.error();
  }
  if (!o.simulate && !o.hosts) {  // a cell run here: its events log sampled every shaped end
    auto ports = read_link_bytes(e, cell, files);
    if (!ports) {
      return ports.error();
    }
    outcome->measured.link_bytes = std::move(*ports);
  }
  if (!o.hosts) {  // the player's flow summaries, or the model's for a simulated cell
    auto tenants = tenant_goodput(files.events);
    if (!tenants) {
      return tenants.error();
    }
    outcome->measured.tenants = std::move(*tenants);
  }
  outcome->measured.steal = cpu.steal;
  outcome->measured.others_cpu = cpu.others_cpu;
  say_cpu(cell, outcome->measured, o);
  return outcome;
}

}  // namespace contend::runner
