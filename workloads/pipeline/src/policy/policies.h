#pragma once
// Private: the policies behind policy.h's table, one file each.

#include <memory>

#include "contend/pipeline/policy/policy.h"

namespace contend::pipeline::detail {

// fixed:k=N: kFkB with the same k every iteration.
std::unique_ptr<KPolicy> make_fixed_policy(int k);

// adaptive and oracle: the controller (adaptive.h) fed with the links as rank 0's reports measured
// them, or (with `truth`) as the scenario has them over the coming iteration.
std::unique_ptr<KPolicy> make_adaptive_policy(const PolicyContext& context, const AdaptiveOptions& options);

}  // namespace contend::pipeline::detail
