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
      std::map<std::string, std::pair<std::uint64_t, bool>> now;
      for (const FlowStats& f : engine.stats()) {
        now[f.name].first += f.bytes_received;
        now[f.name].second = now[f.name].second || f.running;
      }
      for (const auto& [name, v] : now) {
        write(out, {{"kind", "sample"},
                    {"t_s", t},
                    {"flow", name},
                    {"running", v.second},
                    {"bytes_received", v.first},
                    {"rate_bps", 8.0 * static_cast<double>(v.first - last_bytes[name]) / dt}});
        last_bytes[name] = v.first;
      }
      last_sample = t;
      next_sample = t + 0.1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  engine.stop_all();
  // Per flow: bytes over the time it ran (all its on-periods).
  struct Total {
    FlowStats first;
    std::uint64_t bytes = 0;
    double active_s = 0;
    std::string error;
  };
  std::map<std::string, Total> totals;
  for (const FlowStats& f : engine.stats()) {
    Total& t = totals.try_emplace(f.name, Total{f, 0, 0.0, ""}).first->second;
    t.bytes += f.bytes_received;
    t.active_s += f.stopped_s - f.started_s;
    if (!f.error.empty()) {
      t.error = f.error;
    }
  }
  auto list = nlohmann::ordered_json::array();
  if (!o.quiet) {
    std::fprintf(stderr, "%-16s %-5s %7s %14s %14s  %s\n", "flow", "proto", "streams", "target", "achieved", "via");
  }
  for (const auto& [name, t] : totals) {
    const double achieved = t.active_s > 0 ? 8.0 * static_cast<double>(t.bytes) / t.active_s : 0.0;
    list.push_back({{"flow", name},
                    {"protocol", t.first.protocol == Protocol::kTcp ? "tcp" : "udp"},
                    {"streams", t.first.streams},
                    {"target_bps", t.first.target_bps},
                    {"achieved_bps", achieved},
                    {"bytes_received", t.bytes},
                    {"active_s", t.active_s},
                    {"via", t.first.via},
                    {"error", t.error}});
    if (!o.quiet) {
      std::fprintf(
          stderr, "%-16s %-5s %7d %14s %14s  %s%s\n", name.c_str(), t.first.protocol == Protocol::kTcp ? "tcp" : "udp",
          t.first.streams, t.first.target_bps > 0 ? format_rate(t.first.target_bps).c_str() : "unlimited",
          format_rate(achieved).c_str(), t.first.via.c_str(), t.error.empty() ? "" : (" error: " + t.error).c_str());
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
