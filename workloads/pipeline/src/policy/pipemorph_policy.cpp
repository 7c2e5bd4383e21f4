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
    Measurements m;
    m.stages.assign(p_, StageMeasurement{});
    m.links.assign(std::max(0, p_ - 1), LinkMeasurement{});
    if (static_cast<int>(reports.size()) == p_) {
      links_.add(reports);
      m = links_.measurements(reports);
    }
    Decision d;
    d.iteration = iteration;
    d.evaluated = true;
    d.k = 1;
    d.extra = pipemorph_extra(m, m_);
    d.schedule = zb_ ? schedule::zb_spec(d.extra) : schedule::kfkb_spec(1, d.extra);
    d.switched = !(d.schedule == last_);
    for (const LinkMeasurement& l : m.links) {
      d.stall_s.push_back(l.stall_s);
    }
    last_ = d.schedule;
    return d;
  }

 private:

  int p_;
  int m_;
  bool zb_;
  std::vector<StageMeasurement> prior_;
  LinkEstimates links_;
  Spec last_;
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
