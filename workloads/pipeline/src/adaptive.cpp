#include "contend/pipeline/adaptive.h"

#include <algorithm>
#include <limits>

#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"

namespace contend::pipeline {
namespace {

// The simulator's view of the measurements (per rank) for a family of `chunks` stages per rank,
// looped (stage s on rank s % p, each with 1/chunks of its rank's time and stash); appends the rate
// it uses per link to `link_bps`.
sim::SimConfig simulator_config(const Measurements& m, int stages, int chunks, std::vector<double>& link_bps) {
  sim::SimConfig config;
  const double v = std::max(1, chunks);
  for (int st = 0; st < stages * std::max(1, chunks); ++st) {
    const StageMeasurement& s = m.stages[st % stages];
    config.stages.push_back({s.forward_s / v, s.backward_s / v, s.activation_bytes, s.activation_bytes,
                             static_cast<std::uint64_t>(static_cast<double>(s.stash_bytes) / v), 0.5});
  }
  for (const StageMeasurement& s : m.stages) {
    config.costs.push_back({s.send_s, s.iteration_cost_s});
  }
  const double unlimited = std::numeric_limits<double>::infinity();
  for (int r = 0; r + 1 < stages; ++r) {
    const LinkMeasurement& l = m.links[r];
    sim::LinkModel link;
    link.latency_s = l.latency_s;
    link.burst_bytes = l.burst_bytes;
    if (r < static_cast<int>(m.link_traces.size())) {
      link.rate = m.link_traces[r];
      config.links[{r, r + 1}] = link;
      config.links[{r + 1, r}] = link;
      link_bps.push_back(link.rate.rate_at(0));
      continue;
    }
    link.rate = RateTrace::constant(l.goodput_bps > 0 ? l.goodput_bps : unlimited);
    config.links[{r, r + 1}] = link;
    const double back = l.backward_bps > 0 ? l.backward_bps : l.goodput_bps;
    link.rate = RateTrace::constant(back > 0 ? back : unlimited);
    config.links[{r + 1, r}] = link;
    link_bps.push_back(l.goodput_bps);
  }
  return config;
}

}  // namespace

AdaptiveController::AdaptiveController(int stages, int microbatches, AdaptiveOptions options)
    : p_(stages), m_(microbatches), options_(options), k_(std::max(1, options.k_min)), lowered_(stages, microbatches) {
  CONTEND_CHECK(stages >= 1 && microbatches >= 1 && options.k_min >= 1, "adaptive: bad pipeline shape");
  if (options_.k_max <= 0 || options_.k_max > m_) {
    options_.k_max = m_;
  }
  options_.period = std::max(1, options_.period);
  // The first group size that builds (an interleaved group is at least the ranks).
  while (k_ < options_.k_max && !lowered_.builds(candidate(k_))) {
    ++k_;
  }
}

Spec grouped_schedule(int chunks, int k) {
  const std::string text = chunks <= 1 ? "kfkb:k=" + std::to_string(k)
                                       : "interleaved:v=" + std::to_string(chunks) + ",group=" + std::to_string(k);
  return schedule::parse_schedule(text).value();
}

Spec AdaptiveController::candidate(int k) const {
  return grouped_schedule(options_.chunks, k);
}

std::vector<int> AdaptiveController::feasible(const Measurements& m) {
  std::vector<int> out;
  for (int k = options_.k_min; k <= options_.k_max; ++k) {
    auto [pos, fresh] = candidates_.try_emplace(k);
    if (fresh) {
      pos->second = candidate(k);
    }
    if (!lowered_.builds(pos->second)) {
      continue;  // a group size the family refuses for these micro-batches
    }
    const std::vector<int>& inflight = lowered_.peak_inflight(pos->second);
    bool fits = true;
    for (int s = 0; s < p_ && fits; ++s) {
      if (options_.max_inflight > 0 && inflight[s] > options_.max_inflight) {
        fits = false;
      }
      const std::uint64_t stash = s < static_cast<int>(m.stages.size()) ? m.stages[s].stash_bytes : 0;
      if (options_.memory_limit_bytes > 0 &&
          static_cast<std::uint64_t>(inflight[s]) * stash > options_.memory_limit_bytes) {
        fits = false;
      }
    }
    if (fits) {
      out.push_back(k);
    }
  }
  return out;
}

void AdaptiveController::choose(Decision& d, double current_time) {
  double fastest = d.predicted_s.front().second;
  for (const auto& [k, t] : d.predicted_s) {
    fastest = std::min(fastest, t);
  }
  // The leanest k that is about as fast as the fastest (predicted_s is in ascending k).
  int best_k = 0;
  double best_time = 0;
  for (const auto& [k, t] : d.predicted_s) {
    if (t <= fastest * (1 + options_.lean)) {
      best_k = k;
      best_time = t;
      break;
    }
  }
  d.evaluated = true;
  // Hysteresis: leave the current k only for a clear win, or when it no longer fits.
  // Going leaner (a smaller k about as fast as the current one) costs nothing, so it needs no
  // margin: the pipeline gives memory back once a preemption is over.
  const bool current_fits = current_time >= 0;
  const bool leaner = best_k < k_ && best_time <= current_time * (1 + options_.lean);
  if (!decided_ || !current_fits || leaner || best_time < current_time * (1 - options_.hysteresis)) {
    d.switched = decided_ && best_k != k_;
    k_ = best_k;
  }
}

Result<Decision> AdaptiveController::decide(int iteration, const Measurements& m) {
  if (static_cast<int>(m.stages.size()) != p_ || static_cast<int>(m.links.size()) != p_ - 1) {
    return make_error(Errc::kInvalidArgument, "adaptive: measurements for " + std::to_string(m.stages.size()) +
                                                  " stages and " + std::to_string(m.links.size()) +
                                                  " links, the pipeline has " + std::to_string(p_) + " stages");
  }
  Decision d;
  d.iteration = iteration;
  d.k = k_;
  d.schedule = candidate(k_);
  if (decided_ && iteration % options_.period != 0) {
    return d;
  }
  const std::vector<int> ks = feasible(m);
  if (ks.empty()) {
    return make_error(Errc::kInvalidArgument, "adaptive: no k in " + std::to_string(options_.k_min) + ".." +
                                                  std::to_string(options_.k_max) + " fits the memory limit");
  }
  const sim::SimConfig config = simulator_config(m, p_, options_.chunks, d.link_bps);
  double current_time = -1;
  for (int k : ks) {
    auto r = sim::simulate(lowered_.get(candidates_.at(k)), config);
    if (!r) {
      return r.error();
    }
    d.predicted_s.emplace_back(k, r->makespan_s);
    if (k == k_) {
      current_time = r->makespan_s;
    }
  }
  choose(d, current_time);
  decided_ = true;
  d.k = k_;
  d.schedule = candidate(k_);
  return d;
}

}  // namespace contend::pipeline
