#include "contend/pipeline/policy/policy.h"

#include <algorithm>

#include "contend/common/registry.h"
#include "contend/schedule/registry.h"
#include "policy/policies.h"

namespace contend::pipeline {
namespace {

struct PolicyKind {
  const char* first_k = "kmin";  // the parameter holding the k run before anything is measured
  bool chunks = true;            // has "chunks": its family may be interleaved
  bool reads_truth = false;
  const char* knobs = nullptr;  // what the controller moves, fixed by the policy; nullptr: its `knobs`
  bool start = true;            // has "start": probe the links before the first iteration
  std::function<Result<std::unique_ptr<KPolicy>>(const Spec&, const PolicyContext&)> make;
};

// The adaptive controller's options, with `hysteresis` as this policy's default; `knobs` and
// `chunks` unless the policy fixes them (adaptra: slack on kFkB).
std::vector<ParamDef> adaptive_params(const char* hysteresis, bool knobs) {
  const auto integer = [](const char* key, const char* help, const char* fallback) {
    return ParamDef::integer(key, help, fallback, 1);
  };
  const auto fraction = [](const char* key, const char* help, const char* fallback) {
    return ParamDef::number(key, help, fallback, 0, 0.99);
  };
  std::vector<ParamDef> params{integer("kmin", "smallest k considered", "1"),
          integer("kmax", "largest k considered (default: the micro-batches)", "0"),
          ParamDef::size("mem", "activation memory per stage (default: no limit)", "0B", 1),
          integer("inflight", "in-flight micro-batches per stage (default: no limit)", "0"),
          integer("period", "decide every N iterations", "1"),
          fraction("hysteresis", "a larger k must be predicted this much faster", hysteresis),
          fraction("lean", "the smallest k within this fraction of the fastest wins", "0.005"),
          ParamDef::choice("predict", "predict periodic preemption from the links' history (the oracle knows it)",
                           "on", {"on", "off"}),
          ParamDef::choice("start",
                           "the first iteration: probe the links and let the model decide (needs stage times "
                           "known beforehand: emulated stages), or lean: kmin",
                           "probe", {"probe", "lean"})};
  if (knobs) {
    params.push_back(
        ParamDef::integer("chunks", "1: choose kFkB's k; V >= 2: the group of interleaved:v=V", "1", 1, 64));
    params.push_back(ParamDef::choice("knobs", "what it moves: k (Ada-Grouper), slack (Adaptra) or both", "both",
                                      {"k", "slack", "both"}));
  }
  return params;
}

Result<std::unique_ptr<KPolicy>> make_fixed(const Spec& spec, const PolicyContext& c) {
  const std::int64_t k = spec.integer("k");
  if (k > c.microbatches) {
    return make_error(Errc::kInvalidArgument, "policy \"" + spec.str() + "\": k must be 1.." +
                                                  std::to_string(c.microbatches) + " (the micro-batches)");
  }
  return detail::make_fixed_policy(static_cast<int>(k));
}

Result<std::unique_ptr<KPolicy>> make_adaptive(const Spec& spec, const PolicyContext& c) {
  const AdaptiveOptions options = adaptive_options(spec);
  if (options.k_min > c.microbatches || (options.k_max > 0 && options.k_max < options.k_min)) {
    return make_error(Errc::kInvalidArgument, "policy \"" + spec.str() + "\": needs kmin <= kmax and kmin <= " +
                                                  std::to_string(c.microbatches) + " (the micro-batches)");
  }
  if (options.knobs == Knobs::kSlack && options.chunks > 1) {
    return make_error(Errc::kInvalidArgument, "policy \"" + spec.str() +
                                                  "\": slack applies to kFkB (chunks=1); interleaved takes knobs=k");
  }
  PolicyContext own = c;
  own.truth.reset();  // only the oracle reads the truth
  return detail::make_adaptive_policy(own, options);
}

Result<std::unique_ptr<KPolicy>> make_oracle(const Spec& spec, const PolicyContext& c) {
  if (!c.truth || static_cast<int>(c.truth->links.size()) != c.stages - 1 || !c.truth->now_s) {
    return make_error(Errc::kInvalidArgument, "the oracle policy needs the scenario's rate of each of the " +
                                                  std::to_string(c.stages - 1) +
                                                  " links and its clock (an experiment's scenario)");
  }
  return detail::make_adaptive_policy(c, adaptive_options(spec));
}

// One line per policy.
const Registry<PolicyKind>& table() {
  static const Registry<PolicyKind> kTable("policy", {
      {{"", "fixed", "kFkB with the same k every iteration, through the adaptive path",
        {ParamDef::integer("k", "micro-batches per group", std::nullopt, 1)}},
       "k",
       false,
       false,
       nullptr,
       false,
       make_fixed},
      {{"", "adaptive", "chooses k (Ada-Grouper) and the slack vector (Adaptra) each iteration from in-band "
        "measurements", adaptive_params("0.05", true)},
       "kmin",
       true,
       false,
       nullptr,
       true,
       make_adaptive},
      {{"", "adaptra", "Adaptra: chooses the slack vector each iteration from in-band measurements "
        "(adaptive:knobs=slack)", adaptive_params("0.05", false)},
       "kmin",
       false,
       false,
       "slack",
       true,
       make_adaptive},
      {{"", "oracle", "chooses k and slack from the scenario's ground truth (experiments only: a bound)",
        adaptive_params("0", true)},
       "kmin",
       true,
       true,
       nullptr,
       true,
       make_oracle},
  });
  return kTable;
}

const PolicyKind* find(const Spec& spec) {
  const auto* item = table().find(spec);
  return item == nullptr ? nullptr : &item->kind;
}

}  // namespace

std::vector<const SpecEntry*> policy_entries() {
  return table().entries();
}

Result<Spec> parse_schedule_or_policy(std::string_view text) {
  std::vector<const SpecEntry*> entries = schedule::schedule_entries();
  for (const SpecEntry* p : policy_entries()) {
    entries.push_back(p);
  }
  return parse_spec(text, entries, "schedule");
}

bool is_policy(const Spec& spec) {
  return find(spec) != nullptr;
}

bool reads_truth(const Spec& spec) {
  const PolicyKind* p = find(spec);
  return p != nullptr && p->reads_truth;
}

bool probes_links(const Spec& spec) {
  const PolicyKind* p = find(spec);
  return p != nullptr && p->start && spec.text("start") == "probe";
}

std::uint64_t probe_frame_bytes(std::uint64_t activation_bytes) {
  return std::clamp<std::uint64_t>(activation_bytes, kMinTimedBytes, 256 * 1024);
}

int initial_k(const Spec& spec) {
  const PolicyKind* p = find(spec);
  CONTEND_CHECK(p != nullptr, "initial_k: \"" + spec.str() + "\" is not a policy spec");
  return static_cast<int>(spec.integer(p->first_k));
}

Spec first_schedule(const Spec& spec, int ranks, int microbatches) {
  if (!is_policy(spec)) {
    return spec;
  }
  const PolicyKind* p = find(spec);
  const int chunks = p->chunks ? static_cast<int>(spec.integer("chunks")) : 1;
  int k = initial_k(spec);
  // An interleaved group must be at least the ranks (or all micro-batches): the first that builds.
  while (k < microbatches && !schedule::make_schedule(grouped_schedule(chunks, k), ranks, microbatches)) {
    ++k;
  }
  return grouped_schedule(chunks, k);
}

AdaptiveOptions adaptive_options(const Spec& spec) {
  AdaptiveOptions o;
  o.k_min = static_cast<int>(spec.integer("kmin"));
  o.k_max = static_cast<int>(spec.integer("kmax"));
  o.memory_limit_bytes = spec.size("mem");
  o.max_inflight = static_cast<int>(spec.integer("inflight"));
  o.period = static_cast<int>(spec.integer("period"));
  o.hysteresis = spec.number("hysteresis");
  o.lean = spec.number("lean");
  const PolicyKind* p = find(spec);
  o.chunks = p->chunks ? static_cast<int>(spec.integer("chunks")) : 1;
  o.predict = spec.text("predict") == "on";
  const std::string knobs = p->knobs != nullptr ? p->knobs : spec.text("knobs");
  o.knobs = knobs == "slack" ? Knobs::kSlack : knobs == "both" ? Knobs::kBoth : Knobs::kK;
  return o;
}

Result<void> check_policy(const Spec& spec, int stages, int microbatches) {
  PolicyContext c{stages, microbatches, std::nullopt, {}, {}};
  if (reads_truth(spec)) {
    // A stand-in truth: only its shape matters to the checks.
    c.truth = OracleTruth{std::vector<RateTrace>(stages > 1 ? stages - 1 : 0, RateTrace::constant(1e9)),
                          [] { return 0.0; }, nullptr};
  }
  auto made = make_policy(spec, c);
  if (!made) {
    return made.error();
  }
  return {};
}

Result<std::unique_ptr<KPolicy>> make_policy(const Spec& spec, const PolicyContext& context) {
  const PolicyKind* p = find(spec);
  CONTEND_CHECK(p != nullptr, "make_policy: \"" + spec.str() + "\" is not a policy spec");
  return p->make(spec, context);
}

}  // namespace contend::pipeline
