#include "contend/emulator/player.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "contend/common/json.h"
#include "contend/common/overloaded.h"
#include "contend/common/units.h"
#include "contend/emulator/event_record.h"
#include "port_samples.h"
#include "sample_pacer.h"
#include "shaping_watch.h"
#include "threads.h"

namespace contend::emulator {

Result<EventLog> EventLog::open(const std::string& path) {
  auto writer = JsonLinesWriter::open(path, "contend.events/1", JsonLinesWriter::Mode::kCreate);
  if (!writer) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      return make_error(Errc::kInvalidArgument,
                        "event log " + path + " exists already (" + (S_ISLNK(st.st_mode) ? "a link" : "a file") +
                            "): a log is never overwritten nor written through a link; remove it or name another");
    }
    return with_context(writer.error(), "event log " + path);
  }
  return EventLog(std::move(*writer));
}

void EventLog::write(const nlohmann::ordered_json& line) {
  if (auto ok = writer_->write(line); !ok) {
    std::lock_guard<std::mutex> lock(*error_mutex_);
    if (!error_) {
      error_ = ok.error();
    }
  }
}

std::optional<Error> EventLog::error() const {
  std::lock_guard<std::mutex> lock(*error_mutex_);
  return error_;
}

namespace {

// Past this many links a scenario's samples are logged compact, as a fabric's are: a line per
// shaped end and class is 6 lines a link a round (a 64-node full mesh's wrote 438 MB in 20 s).
constexpr std::size_t kClassLinesMaxLinks = 32;

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

nlohmann::ordered_json base_rates(const Scenario& scenario) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const LinkSpec& l : scenario.links) {
    out[l.name] = l.rate_bps;
  }
  return out;
}

// The stalls the runtime applies from an iteration on (no clock plays them): the ground truth of
// a PipeMorph trace, in the start line.
nlohmann::ordered_json iteration_stalls(const Scenario& scenario) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Event& e : scenario.iteration_events) {
    out.push_back(event_record(e));  // a stall with its "iteration"
  }
  return out;
}

// One play: the loop that applies events and samples on one clock, and what it logs.
class Player {
 public:
  Player(const Scenario& scenario, LinkControl& net, EventLog& log, const PlayerOptions& options, FlowEngine* flows)
      : scenario_(scenario), net_(net), log_(log), options_(options), flows_(flows) {}

  Result<PlayReport> run(const std::atomic<bool>& stop) {
    const double period = std::chrono::duration<double>(options_.sample_period).count();
    log_start();
    std::size_t next = 0;
    double next_sample = 0;
    for (;;) {
      const double next_event = next < scenario_.events.size() ? scenario_.events[next].at_s : scenario_.duration_s;
      const bool sample_first = period > 0 && next_sample <= next_event && next_sample < scenario_.duration_s;
      if (!sleep_until(t0_, sample_first ? next_sample : next_event, stop)) {
        report_.stopped = true;
        if (auto ok = at_stop(next, period); !ok) {
          log_failure(ok.error());
          return ok.error();
        }
        break;
      }
      if (sample_first) {
        const Clock::time_point began = Clock::now();
        if (auto ok = sample(); !ok) {
          log_failure(ok.error());
          return ok.error();
        }
        next_sample += pace(std::chrono::duration<double>(Clock::now() - began).count());
        continue;
      }
      if (next >= scenario_.events.size()) {
        break;  // the scenario's duration is over
      }
      const Event& e = scenario_.events[next++];
      if (auto ok = apply(e); !ok) {
        log_failure(ok.error());
        return with_context(ok.error(), "event at " + format_seconds(e.at_s) + " (" + e.origin + ")");
      }
      progress(next);
    }
    log_end();
    return report_;
  }

 private:
  void log_start() {
    log_.write({{"kind", "start"},
                {"scenario", scenario_.name},
                {"source", scenario_.source},
                {"duration_s", scenario_.duration_s},
                {"events", scenario_.events.size()},
                {"wall_time_unix_s",
                 std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()},
                // The same instant on the monotonic clock that the workers' iteration logs use.
                {"steady_s", std::chrono::duration<double>(t0_.time_since_epoch()).count()},
                {"base_rates_bps", base_rates(scenario_)},
                {"iteration_stalls", iteration_stalls(scenario_)}});
  }

  // The period until the next round after one that took `cost_s` (SamplePacer); a line in the log
  // when it changes.
  double pace(double cost_s) {
    const double was = pacer_.period_s();
    const double period = pacer_.after(cost_s);
    if (period != was) {
      log_.write({{"kind", "sample_period"}, {"t_s", since(t0_)}, {"period_s", period}, {"round_s", pacer_.cost_s()}});
    }
    return period;
  }

  // A line per shaped end and class; on a fabric or past kClassLinesMaxLinks links, one line for
  // all the ports (port_samples.h).
  void log_samples(double t, const std::vector<LinkSample>& samples) {
    if (scenario_.has_fabric() || scenario_.links.size() > kClassLinesMaxLinks) {
      for (const nlohmann::ordered_json& line : ports_.lines(t, samples)) {
        log_.write(line);
      }
      return;
    }
    for (const LinkSample& s : samples) {
      log_.write({{"kind", "sample"},
                  {"t_s", t},
                  {"link", s.link},
                  {"node", s.node},
                  {"class", s.stats.name},
                  {"rate_bps", s.stats.rate_bps},
                  {"bytes", s.stats.bytes},
                  {"packets", s.stats.packets},
                  {"drops", s.stats.drops},
                  {"overlimits", s.stats.overlimits},
                  {"backlog_bytes", s.stats.backlog_bytes}});
    }
  }

  // The counters of every shaped class and of every flow.
  Result<void> sample() {
    auto samples = net_.sample();
    if (!samples) {
      return samples.error();
    }
    const double t = since(t0_);
    if (auto ok = watch_.check(*samples, t); !ok) {
      return ok;
    }
    log_samples(t, *samples);
    if (flows_ != nullptr) {
      for (const FlowStats& f : flows_->stats()) {
        // Over the time since the last sample as it really passed (a busy machine wakes late).
        const double dt = t - last_sample_s_;
        const std::uint64_t before = std::exchange(last_received_[f.name], f.bytes_received);
        log_.write({{"kind", "flow_sample"},
                    {"t_s", t},
                    {"flow", f.name},
                    {"running", f.running},
                    {"bytes_received", f.bytes_received},
                    {"bytes_sent", f.bytes_sent},
                    {"rate_bps", dt > 0 ? 8.0 * static_cast<double>(f.bytes_received - before) / dt : 0.0},
                    {"via", f.via}});
      }
    }
    last_sample_s_ = t;
    return {};
  }

  Result<void> apply(const Event& e) {
    return std::visit(Overloaded{[&](const SetRate& r) { return apply_rate(e, r); },
                                 [&](const SetStall&) {
                                   log_stall(e);
                                   return Result<void>();
                                 },
                                 [&](const FlowStart& f) { return apply_flow(e, f.flow, true); },
                                 [&](const FlowStop& f) { return apply_flow(e, f.flow, false); },
                                 [&](const SetLinkState& l) { return apply_link_state(e, l); }},
                      e.action);
  }

  Result<void> apply_flow(const Event& e, const FlowSpec& flow, bool start) {
    if (flows_ == nullptr || !flows_->source_here(flow)) {
      log_unrun_flow(e, flow);
      return {};
    }
    auto ok = start ? flows_->start(flow) : flows_->stop(flow.name);
    if (!ok && start) {
      return ok;
    }
    report_.flow_events++;
    const double applied = since(t0_);
    nlohmann::ordered_json line = event_record(e);
    line["applied_s"] = applied;
    line["status"] = ok ? "applied" : "not running";
    log_.write(line);
    return on_time(e, applied);
  }

  Result<void> apply_rate(const Event& e, const SetRate& r) {
    return apply_to_network(e, [&]() -> Result<void> {
      auto ok = net_.set_rate(r.link, r.rate_bps);
      if (ok) {
        watch_.rate_set(r.link, r.rate_bps);
      }
      return ok;
    });
  }

  // A link down or up, and a fabric's routes around it.
  Result<void> apply_link_state(const Event& e, const SetLinkState& l) {
    return apply_to_network(e, [&]() -> Result<void> {
      auto ok = net_.set_link_state(l.link, l.up);
      if (ok) {
        watch_.state_set(l.link);
      }
      return ok;
    });
  }

  // `call` changes the network for `e`; in force when it returns, which the line logs (applied_s,
  // and call_s: how long it took).
  Result<void> apply_to_network(const Event& e, const std::function<Result<void>()>& call) {
    const double start = since(t0_);
    if (auto ok = call(); !ok) {
      return ok;
    }
    const double applied = since(t0_);
    report_.applied++;
    report_.max_lateness_s = std::max(report_.max_lateness_s, applied - e.at_s);
    nlohmann::ordered_json line = event_record(e);
    line["applied_s"] = applied;
    line["call_s"] = applied - start;
    log_.write(line);
    return on_time(e, applied);
  }

  // An event applied later than the options allow: the network was not the scenario's meanwhile.
  Result<void> on_time(const Event& e, double applied) const {
    const double late = applied - e.at_s;
    const double most = std::chrono::duration<double>(options_.max_lateness).count();
    if (late <= most) {
      return {};
    }
    return make_error(Errc::kIo, "applied " + format_seconds(late) + " late, more than the " + format_seconds(most) +
                                     " a play allows (was the player stopped, or the machine stalled?): the network "
                                     "was not what the scenario says meanwhile");
  }

  // A play stopped before its end (a runner's cell whose ranks ended): the network was the
  // scenario's up to now only if no event is overdue (its time passed while the player did not
  // run: a stopped or stalled process) and a last sample finds the shaping as the player set it
  // (what changed since the previous sample, up to 100 ms ago).
  Result<void> at_stop(std::size_t next, double period) {
    const double now = since(t0_);
    const double most = std::chrono::duration<double>(options_.max_lateness).count();
    if (next < scenario_.events.size() && scenario_.events[next].at_s + most < now) {
      const Event& e = scenario_.events[next];
      return make_error(Errc::kIo, "event at " + format_seconds(e.at_s) + " (" + e.origin + ") was due " +
                                       format_seconds(now - e.at_s) +
                                       " before the play stopped and was never applied (was the player stopped, or "
                                       "the machine stalled?): the network was not what the scenario says meanwhile");
    }
    return period > 0 ? sample() : Result<void>();
  }

  // What ended the play early, as the log's last line.
  void log_failure(const Error& e) { log_.write({{"kind", "failed"}, {"t_s", since(t0_)}, {"error", e.message}}); }

  // A stall is in force from its time in the runtime's transport, which has the run's stall plan
  // and clock (the same time 0 as this play's); the log records it as the ground truth.
  void log_stall(const Event& e) {
    nlohmann::ordered_json line = event_record(e);
    line["logged_s"] = since(t0_);
    log_.write(line);
  }

  // A flow event this play does not run: no flow generator, or (hosts mode) the host the flow
  // leaves runs it.
  void log_unrun_flow(const Event& e, const FlowSpec& flow) {
    const bool elsewhere = flows_ != nullptr;
    report_.skipped_flows += elsewhere ? 0 : 1;
    nlohmann::ordered_json line = event_record(e);
    line["applied_s"] = nullptr;
    line["status"] = elsewhere ? "elsewhere" : "skipped";
    line["reason"] =
        elsewhere ? "its source runs on " + flow.from : std::string("no flow generator attached to this play");
    log_.write(line);
  }

  void progress(std::size_t applied_events) {
    if (options_.quiet || since(t0_) - last_progress_s_ < 5.0) {
      return;
    }
    last_progress_s_ = since(t0_);
    std::fprintf(stderr, "contend emu play: %s of %s, %zu of %zu events\n", format_seconds(last_progress_s_).c_str(),
                 format_seconds(scenario_.duration_s).c_str(), applied_events, scenario_.events.size());
  }

  // Every flow stopped, then a summary line per flow and the end line.
  void log_end() {
    if (flows_ != nullptr) {
      flows_->stop_all();
      for (const FlowStats& f : flows_->stats()) {
        nlohmann::ordered_json line = {{"kind", "flow_summary"},
                                       {"flow", f.name},
                                       {"protocol", protocol_name(f.protocol)},
                                       {"streams", f.streams},
                                       {"target_bps", f.target_bps},
                                       {"achieved_bps", f.achieved_bps()},
                                       {"bytes_received", f.bytes_received},
                                       {"bytes_sent", f.bytes_sent},
                                       {"active_s", f.active_s},
                                       {"ceiling_bps", f.ceiling_bps},
                                       {"send_path", f.send_path},
                                       {"via", f.via},
                                       {"error", f.error}};
        if (f.closed_loop) {
          line["iterations"] = f.iterations;
          line["iteration_s"] = f.iteration_s;
        }
        log_.write(line);
      }
    }
    log_.write({{"kind", "end"},
                {"t_s", since(t0_)},
                {"applied", report_.applied},
                {"flow_events", report_.flow_events},
                {"skipped_flows", report_.skipped_flows},
                {"max_lateness_s", report_.max_lateness_s},
                {"stopped", report_.stopped}});
  }

  const Scenario& scenario_;
  ShapingWatch watch_;
  PortSamples ports_;  // a fabric's samples, compact
  LinkControl& net_;
  EventLog& log_;
  const PlayerOptions& options_;
  FlowEngine* flows_;
  const Clock::time_point t0_ = options_.zero.value_or(Clock::now());
  SamplePacer pacer_{std::chrono::duration<double>(options_.sample_period).count()};
  PlayReport report_;
  double last_progress_s_ = 0;
  double last_sample_s_ = 0;
  std::map<std::string, std::uint64_t> last_received_;  // by flow, at the last sample
};

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
  // The runner plays on a thread of its own: an exception must come back as the play's error,
  // never leave that thread (std::terminate would skip the run's cleanup).
  try {
    auto report = Player(scenario, net, log, options, flows).run(stop);
    if (const auto error = log.error(); report && error) {
      return with_context(*error, "the event log");
    }
    return report;
  } catch (...) {
    return detail::current_exception_error("the scenario player");
  }
}

}  // namespace contend::emulator
