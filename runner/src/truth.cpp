#include "contend/runner/truth.h"

#include <algorithm>
#include <map>

#include "contend/emulator/htb_params.h"
#include "contend/pipeline/backend.h"
#include "contend/pipeline/model.h"
#include "contend/pipeline/policy.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"

namespace contend::runner {
Result<std::vector<RateTrace>> workload_rates(const emulator::Scenario& s) {
  std::vector<RateTrace> out;
  for (std::size_t r = 0; r + 1 < s.nodes.size(); ++r) {
    const emulator::LinkSpec* link = nullptr;
    for (const auto& l : s.links) {
      if ((l.from == s.nodes[r] && l.to == s.nodes[r + 1]) || (l.to == s.nodes[r] && l.from == s.nodes[r + 1])) {
        link = &l;
      }
    }
    if (link == nullptr) {
      return make_error(Errc::kInvalidArgument, s.source + ": no link between " + s.nodes[r] + " and " +
                                                    s.nodes[r + 1] + ": a pipeline runs over a chain of links");
    }
    double rate = link->rate_bps;
    std::map<std::string, double> flows;  // running on this link, by name
    const auto on_link = [&](const emulator::FlowSpec& f) {
      return (f.from == link->from && f.to == link->to) || (f.from == link->to && f.to == link->from);
    };
    const auto current = [&] {
      double total = 0;
      bool unpaced = false;
      for (const auto& [name, bps] : flows) {
        total += bps;
        unpaced = unpaced || bps <= 0;
      }
      return kTcpGoodput * emulator::workload_rate_bps(*link, rate, unpaced ? 0 : total, !flows.empty());
    };
    std::vector<RateTrace::Point> points{{0.0, current()}};
    for (const auto& e : s.events) {
      if (e.kind == emulator::Event::Kind::kSetRate && e.link == link->name) {
        rate = e.rate_bps;
      } else if (e.kind == emulator::Event::Kind::kFlowStart && on_link(e.flow)) {
        flows[e.flow.name] = e.flow.rate_bps * e.flow.streams;
      } else if (e.kind == emulator::Event::Kind::kFlowStop && on_link(e.flow)) {
        flows.erase(e.flow.name);
      } else {
        continue;
      }
      if (e.at_s <= points.back().time_s) {
        points.back().rate_bps = current();
      } else {
        points.push_back({e.at_s, current()});
      }
    }
    auto trace = RateTrace::from_points(std::move(points));
    if (!trace) {
      return trace.error();
    }
    out.push_back(std::move(*trace));
  }
  return out;
}

std::uint64_t shaper_burst_bytes(double goodput_bps) {
  return emulator::burst_bytes_for(goodput_bps / kTcpGoodput);
}

Result<Workload> simulated_workload(const Workload& w, int repeats) {
  if (w.backend == "emulated") {
    return w;
  }
  if (w.backend != "cpu") {
    return make_error(Errc::kUnsupported, "--simulate cannot time " + w.backend +
                                              " stages without their device: run it for real, or simulate an "
                                              "emulated workload with the fwd, bwd and activation measured there");
  }
  pipeline::ModelConfig model;
  model.hidden = w.hidden;
  model.layers = w.layers;
  model.microbatch_size = w.microbatch_size;
  model.seq_len = w.seq_len;
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
  out.forward = fwd / w.stages;
  out.backward = bwd / w.stages;
  out.activation_bytes = model.activation_floats() * sizeof(float);
  return out;
}

Result<SimCell> simulate_cell(const Workload& w, const std::string& schedule, const std::vector<RateTrace>& links) {
  const int p = w.stages;
  const int m = w.microbatches;
  double now = 0;
  std::unique_ptr<pipeline::KPolicy> policy;
  std::map<int, schedule::Schedule> by_k;
  std::optional<schedule::Schedule> fixed;
  int fixed_k = 0;
  if (pipeline::is_policy(schedule)) {
    auto spec = pipeline::parse_policy(schedule);
    if (!spec) {
      return spec.error();
    }
    auto made =
        pipeline::make_policy(*spec, p, m, pipeline::OracleTruth{links, [&now] { return now; }, shaper_burst_bytes});
    if (!made) {
      return made.error();
    }
    policy = std::move(*made);
  } else {
    auto s = schedule::make_schedule(schedule, p, m);
    if (!s) {
      return s.error();
    }
    fixed = schedule::lower(*s);
    fixed_k = schedule == "1f1b" ? 1 : schedule == "gpipe" ? m : 0;
    if (schedule.rfind("kfkb:", 0) == 0) {
      fixed_k = std::atoi(schedule.c_str() + schedule.find_last_of(":=") + 1);
    }
  }
  const double fwd = std::chrono::duration<double>(w.forward).count();
  const double bwd = std::chrono::duration<double>(w.backward).count();
  SimCell out;
  std::vector<pipeline::StageReport> reports;
  for (int it = 0; it < w.warmup + w.iterations; ++it) {
    SimIteration row;
    row.iteration = it;
    row.start_s = now;
    const schedule::Schedule* run = fixed ? &*fixed : nullptr;
    row.k = fixed_k;
    if (policy) {
      auto d = policy->decide(it, reports);
      if (!d) {
        return d.error();
      }
      row.k = d->k;
      auto [pos, fresh] = by_k.try_emplace(d->k);
      if (fresh) {
        pos->second = schedule::lower(schedule::kfkb(p, m, d->k));
      }
      run = &pos->second;
      row.decision = std::move(*d);
    }
    sim::SimConfig config;
    config.record_trace = it + 1 == w.warmup + w.iterations;
    config.stages.assign(p, sim::StageCost{fwd, bwd, w.activation_bytes, w.activation_bytes, w.activation_bytes});
    for (int r = 0; r + 1 < p; ++r) {
      sim::LinkModel link;
      link.rate = links[r].from(now);
      link.burst_bytes = shaper_burst_bytes(links[r].rate_at(now));
      config.links[{r, r + 1}] = link;
      config.links[{r + 1, r}] = link;
    }
    auto result = sim::simulate(*run, config);
    if (!result) {
      return result.error();
    }
    row.iteration_s = result->makespan_s;
    for (const sim::RankStats& rank : result->ranks) {
      row.peak_activation_bytes = std::max(row.peak_activation_bytes, rank.peak_memory_bytes);
    }
    // What each rank would have measured in band: the links' mean goodput over the iteration.
    reports.assign(p, pipeline::StageReport{fwd, bwd, w.activation_bytes, w.activation_bytes, {}, {}});
    for (int r = 0; r + 1 < p; ++r) {
      const double bits = links[r].bits_between(now, now + row.iteration_s);
      const double bps = std::max(bits / row.iteration_s, 1.0);
      const auto bytes = static_cast<std::uint64_t>(m) * w.activation_bytes;
      const double seconds = 8.0 * static_cast<double>(bytes) / bps;
      // The last quarter of the iteration stands for its last frames.
      const double recent_bps = std::max(
          links[r].bits_between(now + 0.75 * row.iteration_s, now + row.iteration_s) / (0.25 * row.iteration_s), 1.0);
      const auto recent_bytes = bytes / 4;
      const pipeline::TransferTotals t{
          bytes,
          seconds,
          m,
          bytes,
          seconds,
          static_cast<double>(config.links[{r, r + 1}].burst_bytes),
          recent_bytes,
          8.0 * static_cast<double>(recent_bytes) / recent_bps,
          static_cast<double>(shaper_burst_bytes(links[r].rate_at(now + row.iteration_s)))};
      reports[r + 1].from_prev = t;
      reports[r].from_next = t;
    }
    now += row.iteration_s;
    out.iterations.push_back(std::move(row));
    out.last = std::move(*result);
  }
  return out;
}

}  // namespace contend::runner
