// The policies of the adaptive controller (adaptive.h), one registration each: adaptive (k and
// slack), adaptra (slack alone), oracle (both, from the scenario's ground truth) and observer
// (both, from the truth as it stands when deciding: adaptive with perfect measurements).

#include "policy/policies.h"

namespace contend::pipeline::detail {
namespace {

// The adaptive controller's options, with `hysteresis` as this policy's default; `knobs` and
// `chunks` unless the policy fixes them (adaptra: slack on kFkB).
std::vector<ParamDef> adaptive_params(const char* hysteresis, bool knobs) {
  const auto integer = [](const char* key, const char* help, const char* fallback) {
    return ParamDef::integer(key, help, fallback, 1);
  };
  const auto fraction = [](const char* key, const char* help, const char* fallback) {
    return ParamDef::number(key, help, fallback, 0, 0.99);
  };
  std::vector<ParamDef> params{
      integer("kmin", "smallest k considered", "1"),
      integer("kmax", "largest k considered (default: the micro-batches)", "0"),
      ParamDef::size("mem", "activation memory per stage (default: no limit)", "0B", 1),
      integer("inflight", "in-flight micro-batches per stage (default: no limit)", "0"),
      integer("period", "decide every N iterations", "1"),
      fraction("hysteresis", "a larger k must be predicted this much faster", hysteresis),
      fraction("lean", "the smallest k within this fraction of the fastest wins", "0.005"),
      ParamDef::choice("predict", "predict periodic preemption from the links' history (the oracle knows it)", "on",
                       {"on", "off"}),
      ParamDef::choice("start",
                       "the first iteration: probe the links and let the model decide (needs stage times "
                       "known beforehand: emulated stages), or lean: kmin",
                       "probe", {"probe", "lean"}),
      ParamDef::choice("zb", "with slack, also zero bubble with its warm-up adapted (PipeMorph's family)", "on",
                       {"on", "off"})};
  if (knobs) {
    params.push_back(
        ParamDef::integer("chunks", "1: choose kFkB's k; V >= 2: the group of interleaved:v=V", "1", 1, 64));
    params.push_back(ParamDef::choice("knobs", "what it moves: k (Ada-Grouper), slack (Adaptra) or both", "both",
                                      {"k", "slack", "both"}));
  }
  return params;
}

Result<void> check_adaptive(const Spec& spec, int /*stages*/, int microbatches) {
  const AdaptiveOptions options = adaptive_options(spec);
  if (options.k_min > microbatches || (options.k_max > 0 && options.k_max < options.k_min)) {
    return make_error(Errc::kInvalidArgument, "policy \"" + spec.str() + "\": needs kmin <= kmax and kmin <= " +
                                                  std::to_string(microbatches) + " (the micro-batches)");
  }
  if (options.knobs == Knobs::kSlack && options.chunks > 1) {
    return make_error(Errc::kInvalidArgument,
                      "policy \"" + spec.str() + "\": slack applies to kFkB (chunks=1); interleaved takes knobs=k");
  }
  return {};
}

Result<std::unique_ptr<KPolicy>> make_adaptive(const Spec& spec, const PolicyContext& c) {
  PolicyContext own = c;
  own.truth.reset();  // only the oracle and the observer read the truth
  return make_adaptive_policy(own, adaptive_options(spec));
}

// The controller on the scenario's truth: with its future (the oracle) or as it stands (the observer).
Result<std::unique_ptr<KPolicy>> make_on_truth(const Spec& spec, const PolicyContext& c, bool foresight) {
  if (!c.truth || static_cast<int>(c.truth->links.size()) != c.stages - 1 || !c.truth->now_s) {
    return make_error(Errc::kInvalidArgument,
                      "the " + spec.name() + " policy needs the scenario's rate of each of the " +
                          std::to_string(c.stages - 1) + " links and its clock (an experiment's scenario)");
  }
  PolicyContext own = c;
  own.truth->foresight = foresight;
  return make_adaptive_policy(own, adaptive_options(spec));
}

}  // namespace

PolicyItem adaptive_policy() {
  return {{"", "adaptive",
           "chooses k (Ada-Grouper) and the slack vector (Adaptra) each iteration from in-band measurements",
           adaptive_params("0.05", true)},
          PolicyKind{.check = check_adaptive, .make = make_adaptive}};
}

PolicyItem adaptra_policy() {
  return {{"", "adaptra",
           "Adaptra: chooses the slack vector each iteration from in-band measurements (adaptive:knobs=slack)",
           adaptive_params("0.05", false)},
          PolicyKind{.chunks = false, .knobs = "slack", .check = check_adaptive, .make = make_adaptive}};
}

PolicyItem oracle_policy() {
  return {{"", "oracle",
           "chooses k and slack from the scenario's ground truth (experiments only: a reference, not a bound on a real "
           "run)",
           adaptive_params("0", true)},
          PolicyKind{.reads_truth = true,
                     .check = check_adaptive,
                     .make = [](const Spec& spec, const PolicyContext& c) { return make_on_truth(spec, c, true); }}};
}

PolicyItem observer_policy() {
  return {{"", "observer",
           "chooses k and slack as adaptive does, from the scenario's ground truth as it stands when deciding in place "
           "of measurements (experiments only: a reference between adaptive and the oracle, which knows what comes)",
           adaptive_params("0.05", true)},
          PolicyKind{.reads_truth = true,
                     .check = check_adaptive,
                     .make = [](const Spec& spec, const PolicyContext& c) { return make_on_truth(spec, c, false); }}};
}

}  // namespace contend::pipeline::detail
