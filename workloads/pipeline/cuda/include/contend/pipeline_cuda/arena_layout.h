#pragma once
// Where each buffer of a cuda stage lives in its one device allocation (the arena) and in its
// pinned host buffer, as a pure function so that a CPU can test it
// (tests/unit/workloads/pipeline/cuda/arena_layout_test.cpp).
//  - Every carve-out starts on a kArenaAlignment (256-byte) boundary, as cudaMalloc's own
//    allocations do: cuBLAS picks its vectorised kernels by pointer alignment, and the loss is a
//    double that atomicAdd needs 8-byte aligned (carved after an odd number of floats, it was not).
//  - Every size is std::size_t with overflow checked: hidden 8192 with ffn 4x and 4 layers per
//    stage has 2,147,647,488 parameters, past INT_MAX.
// Thread-safe (pure).

#include <cstddef>
#include <vector>

#include "contend/common/result.h"

namespace contend::pipeline_cuda {

inline constexpr std::size_t kArenaAlignment = 256;

struct StageShape {
  std::size_t tokens = 0;        // T: tokens per micro-batch
  std::size_t hidden = 0;        // h
  std::size_t ffn = 0;           // f: the blocks' inner width
  std::size_t layers = 0;        // this stage's layers
  std::size_t microbatches = 0;  // m: stash slots (at most m micro-batches in flight)
  bool last = false;             // the last stage also stashes each micro-batch's loss gradient
};

// A buffer: byte offset from its allocation's base (a multiple of kArenaAlignment) and size.
struct Span {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

struct ArenaLayout {
  std::size_t params_per_layer = 0;  // floats: W1 [h x f], b1 [f], W2 [f x h], b2 [h]
  std::size_t parameters = 0;        // floats: params_per_layer x layers
  std::size_t stash_floats = 0;      // floats per stash slot: layers x T(h + f) (+ T h on the last)
  // Device arena.
  Span params, grads, adam_m, adam_v;  // parameters floats each
  std::vector<Span> stash;             // m slots
  Span in, cur, grad, target;          // [T x h]
  Span relu, dact;                     // [T x f]
  Span loss;                           // one double, summed by atomicAdd
  std::vector<Span> out;               // 2m output slots [T x h]: a whole iteration's sends
  std::size_t arena_bytes = 0;
  // Pinned host buffer: the input's staging buffer, then one buffer per output slot.
  Span pinned_in;
  std::vector<Span> pinned_out;
  std::size_t pinned_bytes = 0;
};

// The layout of `shape`. kInvalidArgument when a size is zero, or naming the quantity whose size
// does not fit in std::size_t.
Result<ArenaLayout> plan_arena(const StageShape& shape);

// a x b, or kInvalidArgument "<what> overflows: a x b" when it does not fit in std::size_t.
Result<std::size_t> checked_mul(std::size_t a, std::size_t b, const char* what);

}  // namespace contend::pipeline_cuda
