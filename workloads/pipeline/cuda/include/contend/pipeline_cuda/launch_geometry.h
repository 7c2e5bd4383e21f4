#pragma once
// Launch geometry of the cuda backend's elementwise kernels, as a pure function a CPU can test.
// The kernels loop grid-stride over std::size_t indices, so the grid is capped: a launch over
// more elements than kMaxBlocks x kThreads still covers them all, and an element count past
// 2^31 neither overflows an int nor asks for more blocks than a grid may have.
// Thread-safe (pure).

#include <cstddef>

namespace contend::pipeline_cuda {

inline constexpr unsigned kThreads = 256;
// Enough blocks to fill any current GPU many times over (an H200 has 132 multiprocessors).
inline constexpr unsigned kMaxBlocks = 65535;

// Blocks for `n` elements at kThreads per block: at least 1, at most kMaxBlocks.
constexpr unsigned grid_blocks(std::size_t n) {
  const std::size_t blocks = n / kThreads + (n % kThreads != 0 ? 1 : 0);  // no overflow near SIZE_MAX
  return blocks == 0 ? 1u : blocks > kMaxBlocks ? kMaxBlocks : static_cast<unsigned>(blocks);
}

}  // namespace contend::pipeline_cuda
