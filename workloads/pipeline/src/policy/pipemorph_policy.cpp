// pipemorph: PipeMorph's published rule as a baseline (Adaptra, NSDI'26): every iteration, the
// warm-up each stage needs in front of the links' measured stalls, by the rule alone, on the
// zero-bubble schedule as the paper runs it (or on 1F1B). What is theirs: the rule. What is ours:
// the delays and forward times it is fed are measured in band (the artifact reads the injector's
// own Redis keys), and the warm-ups are capped at the micro-batches and at a memory limit if one
// is given (mem=, inflight=: the artifact's rule has none).

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
  PipeMorphPolicy(const PolicyContext& c, const Spec& spec)
      : p_(c.stages),
        m_(c.microbatches),
        zb_(spec.text("base") == "zb"),
        mem_(spec.size("mem")),
        inflight_(static_cast<int>(spec.integer("inflight"))),
        prior_(c.prior),
        links_(c.stages) {}

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
    d.extra = within_limit(m);
    d.schedule = zb_ ? schedule::zb_spec(d.extra) : schedule::kfkb_spec(1, d.extra);
    d.switched = !(d.schedule == last_);
    for (const LinkMeasurement& l : m.links) {
      d.stall_s.push_back(l.stall_s);
    }
    last_ = d.schedule;
    return d;
  }

 private:
  // The rule's warm-ups within the memory limit (ours: the artifact's rule has none); a stage
  // holds its warm-up forwards in flight, the base's p-r plus the extra.
  std::vector<int> within_limit(const Measurements& m) const {
    return pipemorph_extra_within(m, m_, [&](const std::vector<int>& extra) {
      for (int r = 0; r < p_; ++r) {
        const std::uint64_t stash = r < static_cast<int>(m.stages.size()) ? m.stages[r].stash_bytes : 0;
        const auto held = static_cast<std::uint64_t>(p_ - r + extra[r]);
        if ((inflight_ > 0 && held > static_cast<std::uint64_t>(inflight_)) || (mem_ > 0 && held * stash > mem_)) {
          return false;
        }
      }
      return true;
    });
  }

  int p_;
  int m_;
  bool zb_;
  std::uint64_t mem_;  // per stage, stash bytes; 0: no limit
  int inflight_;       // per stage, micro-batches; 0: no limit
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
  return {{"",
           "pipemorph",
           "PipeMorph's published rule (Adaptra): each stage's warm-up from its link's measured stall over its "
           "forward time, on zero bubble",
           {ParamDef::choice("base", "the schedule the warm-ups adapt: zb (the paper's) or 1f1b", "zb", {"zb", "1f1b"}),
            ParamDef::choice("start", "the first iteration: probe the links first, or lean (no delay assumed)", "probe",
                             {"probe", "lean"}),
            ParamDef::size("mem", "activation memory per stage: the warm-ups capped within it (default: no limit)",
                           "0B", 1),
            ParamDef::integer("inflight", "in-flight micro-batches per stage, likewise (default: no limit)", "0", 1)}},
          PolicyKind{.first_k = nullptr,
                     .chunks = false,
                     .check = check_pipemorph,
                     .make = [](const Spec& spec, const PolicyContext& c) -> Result<std::unique_ptr<KPolicy>> {
                       return std::unique_ptr<KPolicy>(std::make_unique<PipeMorphPolicy>(c, spec));
                     }}};
}

}  // namespace detail
}  // namespace contend::pipeline
