#include "contend/pipeline/policy/adaptive.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contend/schedule/generators.h"
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

// The time link r adds to one micro-batch's round trip: its activation forward, its gradient
// back, a latency each way. An unmeasured or unlimited direction adds nothing.
double round_trip_s(const Measurements& m, int r) {
  const LinkMeasurement& l = m.links[r];
  const RateTrace* trace = r < static_cast<int>(m.link_traces.size()) ? &m.link_traces[r] : nullptr;
  const double bits = 8.0 * static_cast<double>(m.stages[r].activation_bytes);
  const double forward = trace != nullptr ? trace->rate_at(0) : l.goodput_bps;
  const double backward = trace != nullptr ? forward : (l.backward_bps > 0 ? l.backward_bps : l.goodput_bps);
  double t = 2 * l.latency_s;
  for (const double bps : {forward, backward}) {
    if (bps > 0 && std::isfinite(bps)) {
      t += bits / bps;
    }
  }
  return t;
}

// Adds to `out` the slack vectors tried around an estimate: scaled by each factor, each entry at
// most `cap` of its stage (what the memory limit leaves it); distinct and non-zero. Scaling keeps
// the estimate non-increasing and the caps grow by k a stage, so none deadlocks.
void slack_variants(const std::vector<int>& estimate, const std::vector<double>& factors, const std::vector<int>& cap,
                    std::vector<std::vector<int>>& out) {
  for (const double f : factors) {
    std::vector<int> v;
    for (std::size_t s = 0; s < estimate.size(); ++s) {
      v.push_back(std::max(0, std::min(cap[s], static_cast<int>(std::ceil(f * estimate[s])))));
    }
    if (std::any_of(v.begin(), v.end(), [](int e) { return e > 0; }) &&
        std::find(out.begin(), out.end(), v) == out.end()) {
      out.push_back(std::move(v));
    }
  }
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
  current_ = candidate(k_);
}

Spec AdaptiveController::candidate(int k) const {
  return schedule::grouped_spec(options_.chunks, k);
}

std::vector<int> slack_estimate(const Measurements& m, int only_link) {
  const int p = static_cast<int>(m.stages.size());
  double cycle = 0;
  for (const StageMeasurement& s : m.stages) {
    cycle = std::max(cycle, s.forward_s + s.backward_s);
  }
  std::vector<int> extra(p, 0);
  double behind = 0;  // what the links from stage s to the last add to a round trip
  for (int s = p - 1; s >= 0 && cycle > 0; --s) {
    if (s < static_cast<int>(m.links.size()) && (only_link < 0 || only_link == s)) {
      behind += round_trip_s(m, s);
    }
    extra[s] = static_cast<int>(std::min(1e6, std::ceil(behind / cycle - 1e-9)));
  }
  return extra;
}

int slowest_link(const Measurements& m) {
  int slowest = -1;
  double most = 0;
  for (int r = 0; r < static_cast<int>(m.links.size()); ++r) {
    if (const double t = round_trip_s(m, r); t > most) {
      most = t;
      slowest = r;
    }
  }
  return slowest;
}

bool AdaptiveController::fits(const Spec& spec, const Measurements& m) {
  if (!lowered_.builds(spec)) {
    return false;  // a group size or vector the family refuses for these micro-batches
  }
  const std::vector<int>& inflight = lowered_.peak_inflight(spec);
  for (int s = 0; s < p_; ++s) {
    if (options_.max_inflight > 0 && inflight[s] > options_.max_inflight) {
      return false;
    }
    const std::uint64_t stash = s < static_cast<int>(m.stages.size()) ? m.stages[s].stash_bytes : 0;
    if (options_.memory_limit_bytes > 0 &&
        static_cast<std::uint64_t>(inflight[s]) * stash > options_.memory_limit_bytes) {
      return false;
    }
  }
  return true;
}

std::vector<int> AdaptiveController::feasible(const Measurements& m) {
  std::vector<int> out;
  for (int k = options_.k_min; k <= options_.k_max; ++k) {
    auto [pos, fresh] = candidates_.try_emplace(k);
    if (fresh) {
      pos->second = candidate(k);
    }
    if (fits(pos->second, m)) {
      out.push_back(k);
    }
  }
  return out;
}

std::vector<int> AdaptiveController::slack_caps(int k, const Measurements& m) const {
  std::vector<int> cap(p_);
  for (int s = 0; s < p_; ++s) {
    long long most = m_;  // in flight on stage s: kFkB's k(p-s) plus the extra
    if (options_.max_inflight > 0) {
      most = std::min<long long>(most, options_.max_inflight);
    }
    if (options_.memory_limit_bytes > 0 && m.stages[s].stash_bytes > 0) {
      most = std::min<long long>(most, static_cast<long long>(options_.memory_limit_bytes / m.stages[s].stash_bytes));
    }
    cap[s] = static_cast<int>(std::max(0LL, most - static_cast<long long>(k) * (p_ - s)));
  }
  return cap;
}

Result<AdaptiveController::Candidate> AdaptiveController::simulate(const Spec& spec, int k, std::vector<int> extra,
                                                                   const Measurements& m,
                                                                   const sim::SimConfig& config) {
  auto r = sim::simulate(lowered_.get(spec), config);
  if (!r) {
    return r.error();
  }
  Candidate c{spec, k, std::move(extra), r->makespan_s, 0};
  const std::vector<int>& inflight = lowered_.peak_inflight(spec);
  for (int s = 0; s < p_; ++s) {
    c.memory += inflight[s] * std::max(1.0, static_cast<double>(m.stages[s].stash_bytes));
  }
  return c;
}

Result<std::vector<AdaptiveController::Candidate>> AdaptiveController::evaluate(const Measurements& m,
                                                                                const sim::SimConfig& config,
                                                                                Decision& d) {
  std::vector<Candidate> out;
  std::vector<int> ks = feasible(m);
  if (options_.knobs == Knobs::kSlack) {
    ks.resize(std::min<std::size_t>(ks.size(), 1));  // slack moves alone, at the first k that fits
  }
  int since_better = 0;
  for (const int k : ks) {
    auto c = simulate(candidates_.at(k), k, {}, m, config);
    if (!c) {
      return c.error();
    }
    d.predicted_s.emplace_back(k, c->time_s);
    const bool better = std::all_of(out.begin(), out.end(), [&](const Candidate& o) { return c->time_s < o.time_s; });
    out.push_back(std::move(*c));
    since_better = better ? 0 : since_better + 1;
    if (options_.knobs == Knobs::kBoth && since_better == kPatience) {
      break;  // pruned: the joint search has slack to try, and kFkB's curve has flattened
    }
  }
  if (options_.knobs == Knobs::kK || options_.chunks > 1 || out.empty()) {
    return out;
  }
  if (auto ok = add_slack(m, config, out); !ok) {
    return ok.error();
  }
  return out;
}

Result<void> AdaptiveController::add_slack(const Measurements& m, const sim::SimConfig& config,
                                           std::vector<Candidate>& out) {
  // Slack on the leanest k (Adaptra's: slack instead of grouping) and on the fastest (slack and
  // grouping together); pruned, since slack on a k between them is neither leaner nor faster.
  std::vector<int> bases{out.front().k};
  const auto fastest = std::min_element(out.begin(), out.end(),
                                        [](const Candidate& a, const Candidate& b) { return a.time_s < b.time_s; });
  if (fastest->k != bases.front()) {
    bases.push_back(fastest->k);
  }
  // Around the estimate for every link, and for the slowest alone (slack only in front of it).
  const std::vector<int> all = slack_estimate(m);
  const std::vector<int> straggler = slack_estimate(m, slowest_link(m));
  for (const int k : bases) {
    std::vector<std::vector<int>> vectors;
    const std::vector<int> cap = slack_caps(k, m);
    slack_variants(all, {0.5, 1.0, 1.5, 2.0}, cap, vectors);
    slack_variants(straggler, {1.0, 1.5}, cap, vectors);
    for (const std::vector<int>& extra : vectors) {
      const Spec spec = schedule::kfkb_spec(k, extra);
      if (!fits(spec, m)) {
        continue;
      }
      auto c = simulate(spec, k, extra, m, config);
      if (!c) {
        return c.error();
      }
      out.push_back(std::move(*c));
    }
  }
  return {};
}

double AdaptiveController::fastest_of(const std::vector<Candidate>& candidates) {
  double fastest = candidates.front().time_s;
  for (const Candidate& c : candidates) {
    fastest = std::min(fastest, c.time_s);
  }
  return fastest;
}

Result<void> AdaptiveController::simulate_drop(const Measurements& m, std::vector<Candidate>& candidates) {
  Measurements drop = m;
  for (std::size_t r = 0; r < drop.links.size() && r < m.drop_bps.size(); ++r) {
    drop.links[r].goodput_bps = m.drop_bps[r];
    drop.links[r].backward_bps = m.drop_bps[r];
  }
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
  // by more than kChanged of the slowest stage's forward plus backward), the network changed, not
  // the noise: the choice is made afresh (a drop's best schedule may be only a little faster than
  // the quiet network's choice there, and then it is the drop that matters).
  const bool leaner = current != nullptr && best->memory < current->memory &&
                      best->time_s <= current->time_s * (1 + options_.lean);
  const bool afresh = !decided_ || tentative_ || current == nullptr || changed_since_chosen(m, d.link_bps);
  tentative_ = false;
  if (afresh || leaner || best->time_s < current->time_s * (1 - options_.hysteresis)) {
    d.switched = decided_ && !(best->spec == current_);
    k_ = best->k;
    extra_ = best->extra;
    current_ = best->spec;
    chosen_at_bps_ = d.link_bps;
  }
}

bool AdaptiveController::changed_since_chosen(const Measurements& m, const std::vector<double>& link_bps) const {
  if (link_bps.size() != chosen_at_bps_.size()) {
    return true;
  }
  double cycle = 0;
  for (const StageMeasurement& s : m.stages) {
    cycle = std::max(cycle, s.forward_s + s.backward_s);
  }
  for (std::size_t r = 0; r < link_bps.size(); ++r) {
    // A message's time on the link then and now (0: unmeasured or unlimited).
    const auto seconds = [&](double bps) {
      return bps > 0 && std::isfinite(bps) ? 8.0 * static_cast<double>(m.stages[r].activation_bytes) / bps : 0.0;
    };
    if (std::abs(seconds(link_bps[r]) - seconds(chosen_at_bps_[r])) > kChanged * cycle) {
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
    const auto found = std::find_if(candidates->begin(), candidates->end(),
                                    [&](const Candidate& c) { return c.spec == current_; });
    std::optional<Candidate> apart;
    if (found == candidates->end() && decided_ && fits(current_, m)) {
      auto c = simulate(current_, k_, extra_, m, config);
      if (!c) {
        return c.error();
      }
      apart = std::move(*c);
    }
    const Candidate* current = found != candidates->end() ? &*found : (apart ? &*apart : nullptr);
    if (!m.drop_bps.empty()) {
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
  return d;
}

}  // namespace contend::pipeline
