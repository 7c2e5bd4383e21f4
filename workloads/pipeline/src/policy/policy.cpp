#include "contend/pipeline/policy/policy.h"

#include <algorithm>

#include "contend/common/registry.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"
#include "policy/policies.h"

namespace contend::pipeline {
namespace {

using detail::PolicyKind;

// One line per policy; each policy's file holds its registration (policies.h).
const Registry<PolicyKind>& table() {
  static const Registry<PolicyKind> kTable(
      "policy", {detail::fixed_policy(), detail::adaptive_policy(), detail::adaptra_policy(),
                 detail::pipemorph_policy(), detail::oracle_policy(), detail::observer_policy()});
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
  return p->first_k == nullptr ? 1 : static_cast<int>(spec.integer(p->first_k));
}

Spec first_schedule(const Spec& spec, int ranks, int microbatches) {
  if (!is_policy(spec)) {
    return spec;
  }
  const PolicyKind* p = find(spec);
  const int chunks = p->chunks ? static_cast<int>(spec.integer("chunks")) : 1;
  int k = initial_k(spec);
  // An interleaved group must be at least the ranks (or all micro-batches): the first that builds.
  while (k < microbatches && !schedule::make_schedule(schedule::grouped_spec(chunks, k), ranks, microbatches)) {
    ++k;
  }
  return schedule::grouped_spec(chunks, k);
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
  o.zero_bubble = spec.text("zb") == "on";
  const std::string knobs = p->knobs != nullptr ? p->knobs : spec.text("knobs");
  o.knobs = knobs == "slack" ? Knobs::kSlack : knobs == "both" ? Knobs::kBoth : Knobs::kK;
  return o;
}

Result<void> check_policy(const Spec& spec, int stages, int microbatches) {
  const PolicyKind* p = find(spec);
  CONTEND_CHECK(p != nullptr, "check_policy: \"" + spec.str() + "\" is not a policy spec");
  return p->check(spec, stages, microbatches);
}

Result<ScheduleChoice> resolve_schedule(const Spec& spec, int ranks, int microbatches) {
  if (auto ok = schedule::check_shape(ranks, microbatches); !ok) {
    return ok.error();
  }
  ScheduleChoice out;
  out.spec = spec;
  out.policy = is_policy(spec);
  if (out.policy) {
    // Checked wherever it is resolved (every rank); made at rank 0 alone, with the truth there.
    if (auto ok = check_policy(spec, ranks, microbatches); !ok) {
      return ok.error();
    }
  }
  out.reads_truth = reads_truth(spec);
  out.probes_links = probes_links(spec);
  out.first = first_schedule(spec, ranks, microbatches);
  auto made = schedule::make_schedule(out.first, ranks, microbatches);
  if (!made) {
    return made.error();
  }
  out.lowered = schedule::lower(*made);
  if (auto ok = schedule::validate(out.lowered); !ok) {
    return ok.error();
  }
  return out;
}

Result<std::unique_ptr<KPolicy>> make_policy(const Spec& spec, const PolicyContext& context) {
  if (auto ok = check_policy(spec, context.stages, context.microbatches); !ok) {
    return ok.error();
  }
  return find(spec)->make(spec, context);
}

}  // namespace contend::pipeline
