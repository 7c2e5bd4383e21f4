// The pipeline the policy tests decide for: 4 stages, 16 micro-batches, 4 MiB activations.
#pragma once

#include <cstdint>

namespace contend::policy_tests {

inline constexpr int kP = 4;
inline constexpr int kM = 16;
inline constexpr std::uint64_t kAct = 4u << 20;

}  // namespace contend::policy_tests
