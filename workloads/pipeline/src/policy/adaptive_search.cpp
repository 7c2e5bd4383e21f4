// The adaptive controller's search: the candidates that fit the memory limits (every feasible k,
// and slack vectors around Adaptra's estimate), each simulated.

#include <algorithm>
#include <cmath>

#include "contend/pipeline/policy/adaptive.h"
#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"
#include "policy/adaptive_model.h"

namespace contend::pipeline {
namespace {

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
  if (options_.zero_bubble) {
    if (auto ok = add_zero_bubble(m, config, out); !ok) {
      return ok.error();
    }
  }
  return out;
}

Result<void> AdaptiveController::add_zero_bubble(const Measurements& m, const sim::SimConfig& config,
                                                 std::vector<Candidate>& out) {
  // ZB-H1 and its warm-up adapted: as PipeMorph's rule has it for the measured stalls, for none
  // (its healthy warm-ups) and for a stall to be ready for (Measurements::drop_stall_s), each
  // within the memory limit, and Adaptra's estimate for every link; what fits.
  std::vector<std::vector<int>> vectors{std::vector<int>(p_, 0)};
  Measurements quiet = m;
  for (LinkMeasurement& l : quiet.links) {
    l.stall_s = 0;
  }
  const auto zb_fits = [&](const std::vector<int>& extra) { return fits(schedule::zb_spec(extra), m); };
  std::vector<std::vector<int>> adapted{pipemorph_extra_within(m, m_, zb_fits),
                                        pipemorph_extra_within(quiet, m_, zb_fits), slack_estimate(m)};
  if (!m.drop_stall_s.empty()) {
    adapted.push_back(pipemorph_extra_within(at_drop(m), m_, zb_fits));
  }
  for (std::vector<int> v : adapted) {
    if (std::find(vectors.begin(), vectors.end(), v) == vectors.end()) {
      vectors.push_back(std::move(v));
    }
  }
  for (const std::vector<int>& extra : vectors) {
    const Spec spec = schedule::zb_spec(extra);
    if (!fits(spec, m)) {
      continue;
    }
    auto c = simulate(spec, 1, extra, m, config);
    if (!c) {
      return c.error();
    }
    out.push_back(std::move(*c));
  }
  return {};
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

}  // namespace contend::pipeline
