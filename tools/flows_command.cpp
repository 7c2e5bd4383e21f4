#include "flows_command.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "contend/common/fd.h"
#include "contend/common/json_reader.h"
#include "contend/common/units.h"
#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/flows/flow_job.h"
#include "contend/emulator/net/run_state.h"
#include "contend/emulator/player.h"
#include "signals.h"

namespace contend::tools {
namespace {

using namespace contend::emulator;

struct FlowsOptions {
  std::string job;
  std::string run;
  std::string report = "-";
  bool quiet = false;
};

// The job file as a scenario for the player: the run's nodes and links, the job's flows.
Result<Scenario> load_job(const FlowsOptions& o) {
  auto scenario = load_run_scenario(o.run);
  if (!scenario) {
    return scenario.error();
  }
  auto text = read_json_text(o.job, "a flow job file");
  if (!text) {
    return text.error();
  }
  auto job = parse_flow_job(*text, o.job, *scenario);
  if (!job) {
    return job.error();
  }
  return job_scenario(*job, *scenario);
}

// Per flow: its target, what it achieved over the time it was on, and the source's ceiling when
// the target was above it; then how each UDP source sent, and each closed-loop flow's iterations.
void print_table(const std::vector<FlowStats>& flows) {
  std::fprintf(stderr, "%-16s %-5s %7s %14s %14s %14s  %s\n", "flow", "proto", "streams", "target", "achieved",
               "ceiling", "via");
  for (const FlowStats& f : flows) {
    std::fprintf(stderr, "%-16s %-5s %7d %14s %14s %14s  %s%s\n", f.name.c_str(),
                 f.protocol == Protocol::kTcp ? "tcp" : "udp", f.streams,
                 f.target_bps > 0 ? format_rate(f.target_bps).c_str() : "unlimited",
                 format_rate(f.achieved_bps()).c_str(), f.ceiling_bps > 0 ? format_rate(f.ceiling_bps).c_str() : "-",
                 f.via.c_str(), f.error.empty() ? "" : (" error: " + f.error).c_str());
  }
  for (const FlowStats& f : flows) {
    if (f.ceiling_bps > 0) {
      std::fprintf(stderr, "%s: the target %s is above what this source sends here (%s)\n", f.name.c_str(),
                   format_rate(f.target_bps).c_str(), format_rate(f.ceiling_bps).c_str());
    }
    if (!f.send_path.empty()) {
      std::fprintf(stderr, "%s: %s\n", f.name.c_str(), f.send_path.c_str());
    }
    if (f.closed_loop) {
      std::fprintf(stderr, "%s: its job ended %llu iterations, %s each (median)\n", f.name.c_str(),
                   static_cast<unsigned long long>(f.iterations), format_seconds(f.iteration_s).c_str());
    }
  }
}

int run(const FlowsOptions& o) {
  auto job = load_job(o);
  if (!job) {
    return fail("flows", job.error().message);
  }
  auto log = EventLog::open(o.report);
  if (!log) {
    return fail("flows", log.error().message);
  }
  const auto& stop = install_stop_handlers();
  FlowEngine engine(plan_topology(*job, o.run));
  NoLinks links;
  auto report = play(*job, links, *log, stop, PlayerOptions{std::chrono::milliseconds(100), true}, &engine);
  if (!o.quiet) {
    print_table(engine.stats());
  }
  if (!report) {
    return fail("flows", report.error().message);
  }
  return report->stopped ? 128 + stop_signal() : 0;
}

}  // namespace

std::function<int()> add_flows_command(CLI::App& sub) {
  auto o = std::make_shared<FlowsOptions>();
  CLI::App* f = &sub;
  f->add_option("JOB", o->job, "Flow job file (docs/flows.md)")->required()->check(CLI::ExistingFile);
  f->add_option("--run", o->run, "The run (contend emu up) whose nodes the flows join")->required();
  f->add_option("--report", o->report,
                "The player's event log, contend.events/1 JSON lines: flow starts, stops, samples every 100 ms and a "
                "summary per flow (default - for stdout); created new: an existing file or link is refused");
  f->add_flag("--quiet", o->quiet, "No table on stderr at the end");
  return [o] { return run(*o); };
}

}  // namespace contend::tools
