#pragma once
// Private: what a policy registers (its entry, facts and factory), and each policy's registration,
// defined in its file; policy.cpp's table holds a line for each.

#include <functional>
#include <memory>

#include "contend/common/registry.h"
#include "contend/pipeline/policy/policy.h"

namespace contend::pipeline::detail {

struct PolicyKind {
  const char* first_k = "kmin";  // the parameter holding the k run before anything is measured; nullptr: 1
  bool chunks = true;            // has "chunks": its family may be interleaved
  bool reads_truth = false;      // reads the scenario's ground truth (labelled; refused across hosts)
  const char* knobs = nullptr;   // what the controller moves, fixed by the policy; nullptr: its `knobs`
  bool start = true;             // has "start": may probe the links before the first iteration
  // What make() refuses for a pipeline of this shape, without making anything: every rank
  // checks, rank 0 makes.
  std::function<Result<void>(const Spec& spec, int stages, int microbatches)> check;
  std::function<Result<std::unique_ptr<KPolicy>>(const Spec& spec, const PolicyContext& context)> make;
};

using PolicyItem = Registry<PolicyKind>::Item;

PolicyItem fixed_policy();     // policy/fixed_policy.cpp
PolicyItem adaptive_policy();  // policy/adaptive_family.cpp: the controller's policies
PolicyItem adaptra_policy();
PolicyItem oracle_policy();
PolicyItem observer_policy();
PolicyItem pipemorph_policy();  // policy/pipemorph_policy.cpp: PipeMorph's published rule

// The adaptive controller (adaptive.h) fed with the links as rank 0's reports measured them, or
// (with context.truth) as the scenario has them over the coming iteration (adaptive_policy.cpp).
std::unique_ptr<KPolicy> make_adaptive_policy(const PolicyContext& context, const AdaptiveOptions& options);

}  // namespace contend::pipeline::detail
