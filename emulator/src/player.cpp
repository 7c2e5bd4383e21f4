#include "contend/emulator/player.h"

#include <algorithm>
#include <thread>

#include "contend/common/json.h"
#include "contend/common/units.h"

namespace contend::emulator {

Result<EventLog> EventLog::open(const std::string& path) {
  if (path == "-") {
    return EventLog(stdout, false);
  }
  std::FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) {
    return errno_error(errno, "open event log " + path);
  }
  return EventLog(f, true);
}

EventLog::~EventLog() {
  if (file_ != nullptr && owned_) {
    std::fclose(file_);
  }
}

void EventLog::write(const nlohmann::ordered_json& line) {
  auto doc = json_document("events", 1);
  for (const auto& item : line.items()) {
    doc[item.key()] = item.value();
  }
  const std::string text = doc.dump() + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Sleeps until `t0 + at_s`, in slices so that `stop` is noticed within 50 ms.
bool sleep_until(Clock::time_point t0, double at_s, const std::atomic<bool>& stop) {
  const auto target = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at_s));
  while (!stop.load()) {
    const auto now = Clock::now();
    if (now >= target) {
      return true;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(target - now, std::chrono::milliseconds(50)));
  }
  return false;
}

const char* protocol_name(Protocol p) {
  return p == Protocol::kTcp ? "tcp" : "udp";
}

nlohmann::ordered_json base_rates(const Scenario& scenario) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const LinkSpec& l : scenario.links) {
    out[l.name] = l.rate_bps;
  }
  return out;
}

}  // namespace

Result<PlayReport> play(const Scenario& scenario, LinkControl& net, EventLog& log, const std::atomic<bool>& stop,
                        const PlayerOptions& options, FlowEngine* flows) {
  // Flows never outlive the play, also when it ends early or fails.
  struct StopFlows {
    FlowEngine* engine;
    ~StopFlows() {
      if (engine != nullptr) {
        engine->stop_all();
      }
    }
  } stop_flows{flows};
  PlayReport report;
  const double period = std::chrono::duration<double>(options.sample_period).count();
  const auto t0 = Clock::now();
  log.write(
      {{"kind", "start"},
       {"scenario", scenario.name},
       {"source", scenario.source},
       {"duration_s", scenario.duration_s},
       {"events", scenario.events.size()},
       {"wall_time_unix_s", std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()},
       // The same instant on the monotonic clock that the workers' iteration logs use.
       {"steady_s", std::chrono::duration<double>(t0.time_since_epoch()).count()},
       {"base_rates_bps", base_rates(scenario)}});
  std::size_t next = 0;
  double next_sample = 0;
  double last_progress = 0;
  while (true) {
    const double next_event = next < scenario.events.size() ? scenario.events[next].at_s : scenario.duration_s;
    const bool sample_first = period > 0 && next_sample <= next_event && next_sample < scenario.duration_s;
    const double wake = sample_first ? next_sample : next_event;
    if (!sleep_until(t0, wake, stop)) {
      report.stopped = true;
      break;
    }
    if (sample_first) {
      auto samples = net.sample();
      if (!samples) {
        return samples.error();
      }
      const double t = since(t0);
      for (const LinkSample& s : *samples) {
        log.write({{"kind", "sample"},
                   {"t_s", t},
                   {"link", s.link},
                   {"node", s.node},
                   {"class", s.stats.name},
                   {"rate_bps", s.stats.rate_bps},
                   {"bytes", s.stats.bytes},
                   {"packets", s.stats.packets},
                   {"drops", s.stats.drops},
                   {"overlimits", s.stats.overlimits}});
      }
      if (flows != nullptr) {
        for (const FlowStats& f : flows->stats()) {
          log.write({{"kind", "flow_sample"},
                     {"t_s", t},
                     {"flow", f.name},
                     {"running", f.running},
                     {"bytes_received", f.bytes_received},
                     {"bytes_sent", f.bytes_sent},
                     {"via", f.via}});
        }
      }
      next_sample += period;
      continue;
    }
    if (next >= scenario.events.size()) {
      break;  // the scenario's duration is over
    }
    const Event& e = scenario.events[next++];
    if (e.kind == Event::Kind::kSetRate) {
      const double start = since(t0);
      if (auto ok = net.set_rate(e.link, e.rate_bps); !ok) {
        return with_context(ok.error(), "event at " + format_seconds(e.at_s) + " (" + e.origin + ")");
      }
      const double applied = since(t0);
      report.applied++;
      report.max_lateness_s = std::max(report.max_lateness_s, applied - e.at_s);
      log.write({{"kind", "rate"},
                 {"scheduled_s", e.at_s},
                 {"applied_s", applied},
                 {"call_s", applied - start},
                 {"link", e.link},
                 {"rate_bps", e.rate_bps},
                 {"origin", e.origin}});
    } else if (flows == nullptr || !flows->source_here(e.flow)) {
      // Not run by this play: no flow generator, or (hosts mode) the host the flow leaves runs it.
      const bool elsewhere = flows != nullptr;
      report.skipped_flows += elsewhere ? 0 : 1;
      log.write({{"kind", e.kind == Event::Kind::kFlowStart ? "flow_start" : "flow_stop"},
                 {"scheduled_s", e.at_s},
                 {"applied_s", nullptr},
                 {"flow", e.flow.name},
                 {"from", e.flow.from},
                 {"to", e.flow.to},
                 {"protocol", protocol_name(e.flow.protocol)},
                 {"origin", e.origin},
                 {"status", elsewhere ? "elsewhere" : "skipped"},
                 {"reason", elsewhere ? "its source runs on " + e.flow.from
                                      : std::string("no flow generator attached to this play")}});
    } else {
      const bool start = e.kind == Event::Kind::kFlowStart;
      auto ok = start ? flows->start(e.flow) : flows->stop(e.flow.name);
      if (!ok && start) {
        return with_context(ok.error(), "event at " + format_seconds(e.at_s) + " (" + e.origin + ")");
      }
      report.flow_events++;
      log.write({{"kind", start ? "flow_start" : "flow_stop"},
                 {"scheduled_s", e.at_s},
                 {"applied_s", since(t0)},
                 {"flow", e.flow.name},
                 {"from", e.flow.from},
                 {"to", e.flow.to},
                 {"protocol", protocol_name(e.flow.protocol)},
                 {"streams", e.flow.streams},
                 {"rate_bps", e.flow.rate_bps},
                 {"origin", e.origin},
                 {"status", ok ? "applied" : "not running"}});
    }
    if (!options.quiet && since(t0) - last_progress >= 5.0) {
      last_progress = since(t0);
      std::fprintf(stderr, "contend emu play: %s of %s, %zu of %zu events\n", format_seconds(last_progress).c_str(),
                   format_seconds(scenario.duration_s).c_str(), next, scenario.events.size());
    }
  }
  log.write({{"kind", "end"},
             {"t_s", since(t0)},
             {"applied", report.applied},
             {"skipped_flows", report.skipped_flows},
             {"max_lateness_s", report.max_lateness_s},
             {"stopped", report.stopped}});
  return report;
}

}  // namespace contend::emulator
