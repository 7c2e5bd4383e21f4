#include "contend/pipeline/policy/adaptive.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"
#include "policy/adaptive_model.h"

namespace contend::pipeline {

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
  current_ = candidate(k_);
}

Spec AdaptiveController::candidate(int k) const {
  return schedule::grouped_spec(options_.chunks, k);
}

double AdaptiveController::fastest_of(const std::vector<Candidate>& candidates) {
  double fastest = candidates.front().time_s;
  for (const Candidate& c : candidates) {
    fastest = std::min(fastest, c.time_s);
  }
  return fastest;
}

Result<void> AdaptiveController::simulate_drop(const Measurements& m, std::vector<Candidate>& candidates) {
  const Measurements drop = at_drop(m);
  std::vector<double> rates;
  const sim::SimConfig config = simulator_config(drop, p_, options_.chunks, rates);
  const double fastest = fastest_of(candidates);
  for (Candidate& c : candidates) {
    if (c.time_s <= fastest * (1 + options_.lean)) {
      auto r = sim::simulate(lowered_.get(c.spec), config);
      if (!r) {
        return r.error();
      }
      c.drop_time_s = r->makespan_s;
    }
  }
  return {};
}

void AdaptiveController::choose(Decision& d, const std::vector<Candidate>& candidates, const Candidate* current,
                                const Measurements& m) {
  const double fastest = fastest_of(candidates);
  // Of the candidates about as fast as the fastest, those about as fast as the best of them at a
  // recent drop's rates (all of them when none was seen)...
  double drop_best = std::numeric_limits<double>::infinity();
  for (const Candidate& c : candidates) {
    if (c.time_s <= fastest * (1 + options_.lean) && c.drop_time_s > 0) {
      drop_best = std::min(drop_best, c.drop_time_s);
    }
  }
  // ...the leanest (least memory, then the smallest k).
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates) {
    if (c.time_s <= fastest * (1 + options_.lean) && !(c.drop_time_s > drop_best * (1 + options_.lean)) &&
        (best == nullptr || c.memory < best->memory || (c.memory == best->memory && c.k < best->k))) {
      best = &c;
    }
  }
  d.evaluated = true;
  // Hysteresis: leave the current schedule only for a clear win, or when it no longer fits.
  // Going leaner (less memory, about as fast as the current one) costs nothing, so it needs no
  // margin: the pipeline gives memory back once a preemption is over.
  // And when a link changed since the current schedule was chosen (a message's time on it moved
  // by more than kChanged of the slowest stage's forward plus backward, and by more than
  // kChangedShare of itself, beyond what readings vary on a steady link), the network changed, not
  // the noise: the choice is made afresh (a drop's best schedule may be only a little faster than
  // the quiet network's choice there, and then it is the drop that matters).
  const bool leaner =
      current != nullptr && best->memory < current->memory && best->time_s <= current->time_s * (1 + options_.lean);
  const bool afresh = !decided_ || tentative_ || current == nullptr || changed_since_chosen(m, d.link_bps);
  tentative_ = false;
  if (afresh || leaner || best->time_s < current->time_s * (1 - options_.hysteresis)) {
    d.switched = decided_ && !(best->spec == current_);
    k_ = best->k;
    extra_ = best->extra;
    current_ = best->spec;
    chosen_at_bps_ = d.link_bps;
    chosen_at_stall_.clear();
    for (const LinkMeasurement& l : m.links) {
      chosen_at_stall_.push_back(l.stall_s);
    }
  }
}

bool AdaptiveController::changed_since_chosen(const Measurements& m, const std::vector<double>& link_bps) const {
  if (link_bps.size() != chosen_at_bps_.size() || m.links.size() != chosen_at_stall_.size()) {
    return true;
  }
  const double cycle = cycle_s(m);
  for (std::size_t r = 0; r < link_bps.size() && r < m.links.size(); ++r) {
    const int link = static_cast<int>(r);
    const double now = message_s(m, link, link_bps[r]) + m.links[r].stall_s;
    const double then = message_s(m, link, chosen_at_bps_[r]) + chosen_at_stall_[r];
    if (std::abs(now - then) > std::max(kChanged * cycle, kChangedShare * std::max(now, then))) {
      return true;
    }
  }
  return false;
}

Result<double> AdaptiveController::fit_latency(const Measurements& m, double measured_s) {
  Measurements at = m;
  const auto predict = [&](double latency) -> Result<double> {
    for (LinkMeasurement& l : at.links) {
      l.latency_s = latency;
    }
    std::vector<double> rates;
    auto r = sim::simulate(lowered_.get(current_), simulator_config(at, p_, options_.chunks, rates));
    if (!r) {
      return r.error();
    }
    return r->makespan_s;
  };
  // Two secant steps from none and 1 ms: the makespan grows about linearly with the latency once
  // the transfers on the critical path carry it.
  constexpr double kMost = 0.05;
  auto none = predict(0);
  if (!none || measured_s <= *none) {
    return none ? Result<double>(0.0) : none.error();
  }
  double a = 0;
  double ta = *none;
  double b = 1e-3;
  for (int step = 0; step < 2; ++step) {
    auto tb = predict(b);
    if (!tb) {
      return tb.error();
    }
    const double slope = (*tb - ta) / (b - a);
    if (!(slope > 0)) {
      return a;  // more latency predicts no more time: it is off the critical path
    }
    const double next = std::clamp(b + (measured_s - *tb) / slope, 0.0, kMost);
    a = b;
    ta = *tb;
    b = next;
  }
  return b;
}

Result<Decision> AdaptiveController::decide(int iteration, const Measurements& m) {
  if (static_cast<int>(m.stages.size()) != p_ || static_cast<int>(m.links.size()) != p_ - 1) {
    return make_error(Errc::kInvalidArgument, "adaptive: measurements for " + std::to_string(m.stages.size()) +
                                                  " stages and " + std::to_string(m.links.size()) +
                                                  " links, the pipeline has " + std::to_string(p_) + " stages");
  }
  Decision d;
  d.iteration = iteration;
  if (!decided_ || iteration % options_.period == 0) {
    const sim::SimConfig config = simulator_config(m, p_, options_.chunks, d.link_bps);
    auto candidates = evaluate(m, config, d);
    if (!candidates) {
      return candidates.error();
    }
    if (candidates->empty()) {
      return make_error(Errc::kInvalidArgument, "adaptive: no k in " + std::to_string(options_.k_min) + ".." +
                                                    std::to_string(options_.k_max) + " fits the memory limit");
    }
    // The current schedule's prediction, simulated apart when it was not a candidate this time.
    const auto found =
        std::find_if(candidates->begin(), candidates->end(), [&](const Candidate& c) { return c.spec == current_; });
    std::optional<Candidate> apart;
    if (found == candidates->end() && decided_ && fits(current_, m)) {
      auto c = simulate(current_, k_, extra_, m, config);
      if (!c) {
        return c.error();
      }
      apart = std::move(*c);
    }
    const Candidate* current = found != candidates->end() ? &*found : (apart ? &*apart : nullptr);
    if (!m.drop_bps.empty() || !m.drop_stall_s.empty()) {
      if (auto ok = simulate_drop(m, *candidates); !ok) {
        return ok.error();
      }
    }
    choose(d, *candidates, current, m);
    d.candidates = static_cast<int>(candidates->size()) + (apart ? 1 : 0);
    decided_ = true;
  }
  d.k = k_;
  d.schedule = current_;
  d.extra = extra_;
  d.latency_s = m.links.empty() ? 0 : m.links.front().latency_s;
  if (std::any_of(m.links.begin(), m.links.end(), [](const LinkMeasurement& l) { return l.stall_s > 0; })) {
    for (const LinkMeasurement& l : m.links) {
      d.stall_s.push_back(l.stall_s);
    }
  }
  return d;
}

}  // namespace contend::pipeline
