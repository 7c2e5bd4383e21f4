// pipemorph: PipeMorph's published rule as a baseline (Adaptra, NSDI'26): every iteration, the
// warm-up each stage needs in front of the links' measured stalls, by the rule alone, on the
// zero-bubble schedule as the paper runs it (or on 1F1B). What is theirs: the rule. What is ours:
// the delays and forward times it is fed are measured in band (the artifact reads the injector's
// own Redis keys), and the warm-ups are capped at the micro-batches.

#include <algorithm>
#include <cmath>

#include "contend/schedule/registry.h"
#include "policy/policies.h"
#include "policy/reports.h"

namespace contend::pipeline {

std::vector<int> pipemorph_warmups(const std::vector<double>& forward_s, const std::vector<double>& delay_s,
                                   int microbatches) {
  const int p = static_cast<int>(forward_s.size());
  std::vector<int> w(p, 1);
  for (int i = p - 2; i >= 0; --i) {
    const double delay = i < static_cast<int>(delay_s.size()) ? delay_s[i] : 0.0;
    const double hops = forward_s[i] > 0 ? std::ceil(delay / forward_s[i] - 1e-9) : 0.0;
    w[i] = static_cast<int>(std::min<double>(microbatches, w[i + 1] + std::min(hops, 1e6) + 2));
  }
  for (int& x : w) {
    x = std::min(x, microbatches);
  }
  return w;
}

namespace detail {
namespace {

class PipeMorphPolicy : public KPolicy {
 public:
  PipeMorphPolicy(const PolicyContext& c, bool zb)
      : p_(c.stages), m_(c.microbatches), zb_(zb), prior_(c.prior), links_(c.stages) {}

  Result<Decision> decide(int iteration, const std::vector<StageReport>& measured) override {
    std::vector<StageReport> reports = measured;
    if (probed(reports, prior_)) {
      with_prior(reports, prior_);
    }
    std::vector<double> forward(p_, 0.0);
    std::vector<double> delay(std::max(0, p_ - 1), 0.0);
    if (static_cast<int>(reports.size()) == p_) {
      links_.add(reports);
      const Measurements m = links_.measurements(reports);
      for (int s = 0; s < p_; ++s) {
        forward[s] = m.stages[s].forward_s;
      }
      for (int r = 0; r + 1 < p_; ++r) {
        delay[r] = m.links[r].stall_s;
      }
    }
    return decision(iteration, pipemorph_warmups(forward, delay, m_), delay);
  }

 private:
  // The warm-ups as slack over the base schedule's own (p-1-r forwards before the steady phase,
  // in ZB-H1 and 1F1B alike: w - 1 of them, the last forward being the steady phase's first).
  Decision decision(int iteration, const std::vector<int>& w, const std::vector<double>& delay) const {
    Decision d;
    d.iteration = iteration;
    d.evaluated = true;
    d.k = 1;
    for (int r = 0; r < p_; ++r) {
      d.extra.push_back(std::max(0, w[r] - 1 - (p_ - 1 - r)));
    }
    d.schedule = zb_ ? schedule::zb_spec(d.extra) : schedule::kfkb_spec(1, d.extra);
    d.switched = !(d.schedule == last_);
    d.stall_s = delay;
    last_ = d.schedule;
    return d;
  }

  int p_;
  int m_;
  bool zb_;
  std::vector<StageMeasurement> prior_;
  LinkEstimates links_;
  mutable Spec last_;
};

Result<void> check_pipemorph(const Spec& spec, int stages, int microbatches) {
  if (spec.text("base") == "zb" && !schedule::make_schedule(schedule::zb_spec({}), stages, microbatches)) {
    return make_error(Errc::kInvalidArgument, "policy \"" + spec.str() + "\": zb does not build for " +
                                                  std::to_string(stages) + " stages and " +
                                                  std::to_string(microbatches) + " micro-batches; take base=1f1b");
  }
  return {};
}

}  // namespace

PolicyItem pipemorph_policy() {
  return {{"", "pipemorph",
           "PipeMorph's published rule (Adaptra): each stage's warm-up from its link's measured stall over its "
           "forward time, on zero bubble",
           {ParamDef::choice("base", "the schedule the warm-ups adapt: zb (the paper's) or 1f1b", "zb", {"zb", "1f1b"}),
            ParamDef::choice("start", "the first iteration: probe the links first, or lean (no delay assumed)",
                             "probe", {"probe", "lean"})}},
          PolicyKind{.first_k = nullptr,
                     .chunks = false,
                     .check = check_pipemorph,
                     .make = [](const Spec& spec, const PolicyContext& c) -> Result<std::unique_ptr<KPolicy>> {
                       return std::unique_ptr<KPolicy>(std::make_unique<PipeMorphPolicy>(c, spec.text("base") == "zb"));
                     }}};
}

}  // namespace detail
}  // namespace contend::pipeline
