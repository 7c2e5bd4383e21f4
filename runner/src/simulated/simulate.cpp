#include "contend/runner/simulated/simulate.h"

#include <algorithm>
#include <cmath>

#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/compute/model.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/lowered_cache.h"
#include "contend/schedule/registry.h"

namespace contend::runner {

Result<Workload> simulated_workload(const Workload& w, int repeats) {
  const auto* backend = pipeline::backends().find(w.backend);
  CONTEND_CHECK(backend != nullptr, "simulated_workload: not a backend spec: " + w.backend.str());
  if (!backend->kind.uses_model) {
    return w;
  }
  if (backend->kind.needs_device) {
    return make_error(Errc::kUnsupported, "--simulate cannot time " + w.backend.str() +
                                              " stages without their device: run it for real, or simulate an "
                                              "emulated workload with the fwd, bwd and activation measured there");
  }
  const pipeline::ModelConfig model = w.model;
  if (auto ok = pipeline::validate_model(model, w.stages); !ok) {
    return ok.error();
  }
  Workload out = w;
  std::chrono::nanoseconds fwd{0}, bwd{0};
  for (int stage = 0; stage < w.stages; ++stage) {
    const auto [f, b] = pipeline::profile_cpu_backend(model, stage, w.stages, repeats);
    fwd += f;
    bwd += b;
  }
  out.emulated.forward = fwd / w.stages;
  out.emulated.backward = bwd / w.stages;
  out.emulated.activation_bytes = model.activation_floats() * sizeof(float);
  return out;
}

namespace {

// A link's stall over an iteration (`iteration`, from `now` on the scenario's clock), as the
// simulator takes it: time 0 is the iteration's start.
RateTrace stall_over(const StallSchedule& s, double now, int iteration) {
  const double from_iteration = s.at(-1, iteration);  // the iteration-indexed part alone
  std::vector<RateTrace::Point> points{{0, s.at(now, iteration)}};
  for (const StallSchedule::Change& c : s.by_time()) {
    if (c.at > now) {
      points.push_back({c.at - now, std::max(c.stall_s, from_iteration)});
    }
  }
  return RateTrace::from_points(std::move(points)).value();
}

// What crosses no shaper (a pair no link joins, a way a link's `direction` leaves alone): the
// runtime's latency, and its line rate where one was measured, else no limit.
sim::LinkModel unshaped_link(const RuntimeModel& runtime) {
  sim::LinkModel link;
  link.latency_s = runtime.latency_s;
  if (runtime.line_bps > 0) {
    link.rate = RateTrace::constant(runtime.line_bps);
  }
  return link;
}

// The simulator's pipeline for iteration `iteration` starting at `now` on the scenario's clock:
// `stages` stages (ranks x chunks: each chunk 1/chunks of its rank's time and stash, a whole
// tensor), every linked pair of ranks at its goodput from `now`, with its stalls.
sim::SimConfig iteration_config(const Workload& w, const ScenarioNetwork& net, double now, int iteration, int stages,
                                const RuntimeModel& runtime) {
  const double chunks = static_cast<double>(stages) / w.stages;
  const double fwd = std::chrono::duration<double>(w.emulated.forward).count() / chunks;
  const double bwd = std::chrono::duration<double>(w.emulated.backward).count() / chunks;
  sim::SimConfig config;
  config.stages.assign(
      stages,
      sim::StageCost{fwd, bwd, w.emulated.activation_bytes, w.emulated.activation_bytes,
                     static_cast<std::uint64_t>(static_cast<double>(w.emulated.activation_bytes) / chunks), 0.5});
  config.costs = {runtime.costs};
  const pipeline::SendOptions sends = pipeline::send_options_of(w.transport);
  config.blocking_sends = sends.wait;
  config.default_link = unshaped_link(runtime);
  for (const auto& [pair, trace] : net.links) {
    const auto back = net.back.find(pair);
    const auto stall = net.stalls.find(pair);
    const auto model = [&](const RateTrace& way) {
      sim::LinkModel link = unshaped_link(runtime);
      if (!way.is_unlimited()) {  // shaped this way
        link.rate = way.from(now);
        link.burst_bytes = link.rate.map([](double bps) { return static_cast<double>(shaper_burst_bytes(bps)); });
        if (runtime.line_bps > 0) {
          link.line_bps = runtime.line_bps;
        }
      }
      if (stall != net.stalls.end()) {
        link.stall_s = stall_over(stall->second, now, iteration);
        link.stall_slots = sends.delegates;
        link.stall_overlaps_wire = !sends.sent_when_delivered;
      }
      return link;
    };
    config.links[{pair.first, pair.second}] = model(trace);
    config.links[{pair.second, pair.first}] = model(back == net.back.end() ? trace : back->second);
  }
  for (const auto& [way, ports] : net.shared_ports) {
    config.links[way].ports = ports;
  }
  config.port_slots = net.port_slots;
  return config;
}

// Per way (from rank, to rank), the wire times (from the iteration's start) of the last
// pipeline::kRecentFrames tensors sent that way in `ran`'s trace, in one pass over it: what the
// receiver times as the link's rate now. Empty without a trace.
std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> last_frames(const sim::SimResult* ran,
                                                                                  double latency_s) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> out;
  if (ran == nullptr) {
    return out;
  }
  for (const sim::TraceEvent& e : ran->trace) {
    if (e.lane == sim::Lane::kSend) {
      out[{e.rank, e.peer_rank}].emplace_back(e.start_s, std::max(e.start_s, e.end_s - latency_s));
    }
  }
  for (auto& [way, frames] : out) {
    std::sort(frames.begin(), frames.end());
    frames.erase(frames.begin(), frames.end() - std::min<std::ptrdiff_t>(std::ssize(frames), pipeline::kRecentFrames));
  }
  return out;
}

// What each rank would have measured in band over iteration `iteration` from `now` lasting
// `seconds`: each way of each chain link its mean goodput (`links` the activations', `back` the
// gradients'), its rate now over the last frames the iteration `ran` sent that way (as the runtime
// times them; without its trace, the iteration's last quarter stands for them), and on the
// senders' clocks each tensor's wire time and its link's stall. `ran`'s port_wait_s: per way
// (from rank, to rank) the time its transfers waited for ports it shares (a fabric host's NIC),
// which a receiver timing them would have seen as a slower rate had they shared the port at once.
std::vector<pipeline::StageReport> inband_reports(const Workload& w, const std::vector<RateTrace>& links,
                                                  const std::vector<RateTrace>& back,
                                                  const std::vector<StallSchedule>& stalls, double now, int iteration,
                                                  double seconds, const sim::RuntimeCosts& costs,
                                                  const sim::SimResult* ran = nullptr, double latency_s = 0) {
  const std::map<std::pair<int, int>, double> none;
  const auto& port_wait_s = ran != nullptr ? ran->port_wait_s : none;
  const double fwd = std::chrono::duration<double>(w.emulated.forward).count();
  const double bwd = std::chrono::duration<double>(w.emulated.backward).count();
  std::vector<pipeline::StageReport> reports(
      w.stages, pipeline::StageReport{fwd, bwd, costs.send_s, costs.iteration_s, w.emulated.activation_bytes,
                                      w.emulated.activation_bytes});
  const auto bytes = static_cast<std::uint64_t>(w.microbatches) * w.emulated.activation_bytes;
  const auto frames_by_way = last_frames(ran, latency_s);
  const auto received = [&](const RateTrace& way, int from, int to) {
    const double bps = std::max(way.bits_between(now, now + seconds) / seconds, 1.0);
    double recent_bits = way.bits_between(now + 0.75 * seconds, now + seconds);
    double recent_s = 0.25 * seconds;
    if (const auto found = frames_by_way.find({from, to}); found != frames_by_way.end()) {
      const auto& frames = found->second;
      // Each frame at the rate the link held while it crossed (at once where a bucket's burst
      // carried it: the rate at that moment), weighted by its time as the receiver's sum is.
      const double frame_bits = 8.0 * static_cast<double>(w.emulated.activation_bytes);
      recent_bits = recent_s = 0;
      for (const auto& [start, end] : frames) {
        const double rate =
            end > start ? way.bits_between(now + start, now + end) / (end - start) : way.rate_at(now + start);
        recent_bits += frame_bits;
        recent_s += frame_bits / std::max(rate, 1.0);
      }
    }
    const double recent_bps = recent_s > 0 ? std::max(recent_bits / recent_s, 1.0) : bps;
    const auto recent_bytes = bytes / 4;
    const auto waited = port_wait_s.find({from, to});
    const double wait = waited == port_wait_s.end() ? 0.0 : waited->second;
    return pipeline::TransferTotals{bytes,
                                    8.0 * static_cast<double>(bytes) / bps + wait,
                                    w.microbatches,
                                    bytes,
                                    8.0 * static_cast<double>(bytes) / bps + wait,
                                    static_cast<double>(shaper_burst_bytes(way.rate_at(now))),
                                    recent_bytes,
                                    8.0 * static_cast<double>(recent_bytes) / recent_bps + wait / 4,
                                    static_cast<double>(shaper_burst_bytes(way.rate_at(now + seconds)))};
  };
  for (int r = 0; r + 1 < w.stages; ++r) {
    const double stall = r < static_cast<int>(stalls.size()) ? stalls[r].at(now, iteration) : 0.0;
    const auto sent = [&](const pipeline::TransferTotals& t) {
      return pipeline::SendTotals{bytes, t.seconds + w.microbatches * stall, w.microbatches};
    };
    reports[r + 1].from_prev = received(links[r], r, r + 1);
    reports[r].to_next = sent(reports[r + 1].from_prev);
    reports[r].from_next = received(r < static_cast<int>(back.size()) ? back[r] : links[r], r + 1, r);
    reports[r + 1].to_prev = sent(reports[r].from_next);
  }
  for (pipeline::StageReport& r : reports) {
    r.iteration_s = seconds;
  }
  return reports;
}

// The stages as the workload (calibrated or not) declares them: the policy's prior.
std::vector<pipeline::StageMeasurement> known_stages(const Workload& w, const sim::RuntimeCosts& costs) {
  const double fwd = std::chrono::duration<double>(w.emulated.forward).count();
  const double bwd = std::chrono::duration<double>(w.emulated.backward).count();
  return std::vector<pipeline::StageMeasurement>(
      w.stages, pipeline::StageMeasurement{fwd, bwd, w.emulated.activation_bytes, w.emulated.activation_bytes,
                                           costs.send_s, costs.iteration_s});
}

// What the ranks' probe of the links before iteration 0 reports (the links only, no compute), the
// time it takes added to `now`: pipeline::kProbeFrames tensors each way, every link at once.
std::vector<pipeline::StageReport> probe_reports(const Workload& w, const std::vector<RateTrace>& links,
                                                 const std::vector<RateTrace>& back,
                                                 const std::vector<StallSchedule>& stalls, double& now,
                                                 const sim::RuntimeCosts& costs) {
  const double bits =
      8.0 * pipeline::kProbeFrames * static_cast<double>(pipeline::probe_frame_bytes(w.emulated.activation_bytes));
  double seconds = 1e-6;
  for (const auto* ways : {&links, &back}) {
    for (const RateTrace& link : *ways) {
      if (const double bps = link.rate_at(now); bps > 0 && std::isfinite(bps)) {
        seconds = std::max(seconds, bits / bps);
      }
    }
  }
  std::vector<pipeline::StageReport> reports =
      inband_reports(w, links, back, stalls, now, pipeline::kProbeIteration, seconds, costs);
  for (pipeline::StageReport& r : reports) {
    r.forward_s = 0;
    r.backward_s = 0;
    r.iteration_s = 0;
  }
  now += seconds;
  return reports;
}

}  // namespace

namespace {

// A reference policy deciding beside the cell's (simulate_cell's `shadows`).
struct Shadow {
  std::string name;
  std::unique_ptr<pipeline::KPolicy> policy;
  double last_s = 0;  // its choice's time over the iteration before: its reports' iteration_s
};

// What a simulated cell runs each iteration: a static schedule's lowering, or a policy's choice.
struct SimRunner {
  std::unique_ptr<pipeline::KPolicy> policy;
  std::optional<schedule::Schedule> fixed;
  std::vector<pipeline::StageReport> reports;  // what the policy decides the next iteration on
  std::vector<Shadow> shadows;
};

// The observer and the oracle with the adaptive policy's options, on the same context.
Result<std::vector<Shadow>> shadows_of(const pipeline::ScheduleChoice& choice, const pipeline::PolicyContext& context) {
  std::vector<Shadow> out;
  const std::string options = choice.spec.str().substr(choice.spec.name().size());  // ":kmax=16" or ""
  for (const char* name : {"observer", "oracle"}) {
    auto spec = pipeline::parse_schedule_or_policy(name + options);
    if (!spec) {
      return spec.error();
    }
    auto made = pipeline::make_policy(*spec, context);
    if (!made) {
      return made.error();
    }
    out.push_back({name, std::move(*made), 0});
  }
  return out;
}

Result<SimRunner> sim_runner(const Workload& w, const pipeline::ScheduleChoice& choice,
                             const std::vector<RateTrace>& links, const std::vector<RateTrace>& back,
                             const std::vector<StallSchedule>& stalls, double& now, const RuntimeModel& runtime,
                             bool shadows) {
  SimRunner out;
  if (!choice.policy) {
    out.fixed = choice.lowered;
    return out;
  }
  const std::function<double()> clock = [&now] { return now; };
  const pipeline::PolicyContext context{w.stages,
                                        w.microbatches,
                                        pipeline::OracleTruth{links, clock, shaper_burst_bytes, stalls, back},
                                        clock,
                                        known_stages(w, runtime.costs),
                                        pipeline::send_options_of(w.transport)};
  auto made = pipeline::make_policy(choice.spec, context);
  if (!made) {
    return made.error();
  }
  out.policy = std::move(*made);
  if (shadows && choice.spec.name() == "adaptive") {
    auto beside = shadows_of(choice, context);
    if (!beside) {
      return beside.error();
    }
    out.shadows = std::move(*beside);
  }
  if (choice.probes_links) {
    out.reports = probe_reports(w, links, back, stalls, now, runtime.costs);
  }
  return out;
}

// Each shadow decides on the reports the cell's policy decided on, told its own choice's time
// over the iteration before, and its choice is timed on this iteration's network (`config`).
Result<void> run_shadows(SimRunner& runner, int iteration, sim::SimConfig config, schedule::LoweredCache& cache,
                         SimIteration& row) {
  config.record_trace = false;
  for (Shadow& shadow : runner.shadows) {
    std::vector<pipeline::StageReport> reports = runner.reports;
    for (pipeline::StageReport& r : reports) {
      r.iteration_s = r.iteration_s > 0 && shadow.last_s > 0 ? shadow.last_s : r.iteration_s;
    }
    auto d = shadow.policy->decide(iteration, reports);
    if (!d) {
      return d.error();
    }
    auto result = sim::simulate(cache.get(d->schedule), config);
    if (!result) {
      return result.error();
    }
    shadow.last_s = result->makespan_s;
    row.shadows.push_back({shadow.name, std::move(*d), result->makespan_s});
  }
  return {};
}

}  // namespace

Result<SimCell> simulate_cell(const Workload& w, const pipeline::ScheduleChoice& choice, const ScenarioNetwork& net,
                              const RuntimeModel& runtime, bool shadows) {
  if (!net.closed_loop.empty()) {
    return make_error(Errc::kUnsupported,
                      "flow " + net.closed_loop + " is a closed-loop job's (\"iterate\"): " +
                          "the simulator takes a chain's flows as streams and cannot time a job's " +
                          "iterations (a fabric's model replays them); run the experiment real");
  }
  auto links = chain_of(net.links, w.stages);  // the oracle's truth and what ranks time in band
  auto back = chain_of(back_links(net), w.stages);
  if (!links || !back) {
    return !links ? links.error() : back.error();
  }
  std::vector<StallSchedule> stalls;  // the chain's, as its senders time them
  for (int r = 0; r + 1 < w.stages; ++r) {
    const auto it = net.stalls.find({r, r + 1});
    stalls.push_back(it == net.stalls.end() ? StallSchedule{} : it->second);
  }
  double now = runtime.start_s;
  auto runner = sim_runner(w, choice, *links, *back, stalls, now, runtime, shadows);
  if (!runner) {
    return runner.error();
  }
  schedule::LoweredCache cache(w.stages, w.microbatches);
  SimCell out;
  for (int it = 0; it < w.warmup + w.iterations; ++it) {
    SimIteration row{it, schedule::group_size(choice.spec, w.microbatches), now, 0, 0, 0, std::nullopt, {}};
    const schedule::Schedule* run = runner->fixed ? &*runner->fixed : nullptr;
    if (runner->policy) {
      auto d = runner->policy->decide(it, runner->reports);
      if (!d) {
        return d.error();
      }
      row.k = d->k;
      run = &cache.get(d->schedule);
      row.decision = std::move(*d);
    }
    sim::SimConfig config = iteration_config(w, net, now, it, choice.lowered.num_stages, runtime);
    if (auto ok = run_shadows(*runner, it, config, cache, row); !ok) {
      return ok.error();
    }
    config.record_trace = runner->policy != nullptr || it + 1 == w.warmup + w.iterations;  // policies read it
    auto result = sim::simulate(*run, config);
    if (!result) {
      return result.error();
    }
    row.iteration_s = result->makespan_s;
    row.compute_s = result->ranks.empty() ? 0 : result->ranks.front().busy_s;
    for (const sim::RankStats& rank : result->ranks) {
      row.peak_activation_bytes = std::max(row.peak_activation_bytes, rank.peak_memory_bytes);
    }
    runner->reports =
        inband_reports(w, *links, *back, stalls, now, it, row.iteration_s, runtime.costs, &*result, runtime.latency_s);
    now += row.iteration_s;
    out.iterations.push_back(std::move(row));
    out.last = std::move(*result);
  }
  return out;
}

}  // namespace contend::runner
