#include "flows_command.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/units.h"
#include "contend/emulator/flow_engine.h"
#include "contend/emulator/flow_job.h"
#include "contend/emulator/run_state.h"
#include "signals.h"

namespace contend::tools {
namespace {

using namespace contend::emulator;
using Clock = std::chrono::steady_clock;

struct FlowsOptions {
  std::string job;
  std::string run;
  std::string report = "-";
  bool quiet = false;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "contend flows: %s\n", message.c_str());
  return 1;
}

void write(std::FILE* out, nlohmann::ordered_json fields) {
  auto doc = json_document("flows", 1);
  for (const auto& item : fields.items()) {
    doc[item.key()] = item.value();
  }
  std::fprintf(out, "%s\n", doc.dump().c_str());
  std::fflush(out);
}

int run(const FlowsOptions& o) {
  auto scenario = load_run_scenario(o.run);
  if (!scenario) {
    return fail(scenario.error().message);
  }
  auto text = read_file(o.job);
  if (!text) {
    return fail(text.error().message);
  }
  auto job = parse_flow_job(*text, o.job, *scenario);
  if (!job) {
    return fail(job.error().message);
  }
  std::FILE* out = o.report == "-" ? stdout : std::fopen(o.report.c_str(), "we");
  if (out == nullptr) {
    return fail(errno_error(errno, "open " + o.report).message);
  }
  const auto& stop = install_stop_handlers();
  FlowEngine engine(plan_topology(*scenario, o.run));
  const auto t0 = Clock::now();
  const auto since = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::map<std::string, std::uint64_t> last_bytes;
  std::size_t next = 0;
  double next_sample = 0.1;
  double last_sample = 0;
  int rc = 0;
  while (!stop.load() && since() < job->duration_s) {
    while (next < job->events.size() && job->events[next].at_s <= since()) {
      const Event& e = job->events[next++];
      auto ok = e.kind == Event::Kind::kFlowStart ? engine.start(e.flow) : engine.stop(e.flow.name);
      if (!ok && e.kind == Event::Kind::kFlowStart) {
        rc = fail(ok.error().message);
        break;
      }
    }
    if (rc != 0) {
      break;
    }
    if (since() >= next_sample) {
      // Rates over the time since the last sample as it really passed (a busy machine wakes late).
      const double t = since();
      const double dt = t - last_sample;
      for (const FlowStats& f : engine.stats()) {
        write(out, {{"kind", "sample"},
                    {"t_s", t},
                    {"flow", f.name},
                    {"running", f.running},
                    {"bytes_received", f.bytes_received},
                    {"rate_bps", 8.0 * static_cast<double>(f.bytes_received - last_bytes[f.name]) / dt}});
        last_bytes[f.name] = f.bytes_received;
      }
      last_sample = t;
      next_sample = t + 0.1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  engine.stop_all();
  auto list = nlohmann::ordered_json::array();
  if (!o.quiet) {
    std::fprintf(stderr, "%-16s %-5s %7s %14s %14s  %s\n", "flow", "proto", "streams", "target", "achieved", "via");
  }
  // Per flow: bytes over the time it ran (all its on-periods).
  for (const FlowStats& f : engine.stats()) {
    const double achieved = f.active_s > 0 ? 8.0 * static_cast<double>(f.bytes_received) / f.active_s : 0.0;
    const char* proto = f.protocol == Protocol::kTcp ? "tcp" : "udp";
    list.push_back({{"flow", f.name},
                    {"protocol", proto},
                    {"streams", f.streams},
                    {"target_bps", f.target_bps},
                    {"achieved_bps", achieved},
                    {"bytes_received", f.bytes_received},
                    {"active_s", f.active_s},
                    {"via", f.via},
                    {"error", f.error}});
    if (!o.quiet) {
      std::fprintf(stderr, "%-16s %-5s %7d %14s %14s  %s%s\n", f.name.c_str(), proto, f.streams,
                   f.target_bps > 0 ? format_rate(f.target_bps).c_str() : "unlimited", format_rate(achieved).c_str(),
                   f.via.c_str(), f.error.empty() ? "" : (" error: " + f.error).c_str());
    }
  }
  write(out, {{"kind", "summary"},
              {"run", o.run},
              {"job", o.job},
              {"duration_s", since()},
              {"stopped", stop.load()},
              {"flows", list}});
  if (out != stdout) {
    std::fclose(out);
  }
  if (rc == 0 && stop.load()) {
    rc = 128 + stop_signal();
  }
  return rc;
}

}  // namespace

std::function<int()> add_flows_command(CLI::App& app) {
  auto o = std::make_shared<FlowsOptions>();
  CLI::App* f = app.add_subcommand("flows",
                                   "Run background TCP/UDP flows (a contend.flow-job/1 file) between the "
                                   "nodes of a run that is up; report achieved rates every 100 ms");
  f->add_option("JOB", o->job, "Flow job file (docs/flows.md)")->required()->check(CLI::ExistingFile);
  f->add_option("--run", o->run, "The run (contend emu up) whose nodes the flows join")->required();
  f->add_option("--report", o->report, "contend.flows/1 JSON lines: samples and a summary (default - for stdout)");
  f->add_flag("--quiet", o->quiet, "No table on stderr at the end");
  return [o] { return run(*o); };
}

}  // namespace contend::tools
