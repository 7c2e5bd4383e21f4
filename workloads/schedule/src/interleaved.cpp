#include <algorithm>

#include "contend/schedule/generators.h"

namespace contend::schedule {

Result<Schedule> interleaved_1f1b(int ranks, int microbatches, int v) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "interleaved needs ranks >= 1 and microbatches >= 1");
  if (v < 2) {
    return make_error(Errc::kInvalidArgument, "interleaved:v=" + std::to_string(v) +
                                                  ": v is the number of model chunks per rank and must be >= 2 "
                                                  "(one chunk per rank is plain 1f1b)");
  }
  if (microbatches % ranks != 0) {
    return make_error(Errc::kInvalidArgument,
                      "interleaved:v=" + std::to_string(v) + " needs the number of micro-batches (" +
                          std::to_string(microbatches) + ") to be a multiple of the number of ranks (" +
                          std::to_string(ranks) + "), as in Megatron-LM");
  }
  const int p = ranks;
  Schedule s{"interleaved:v=" + std::to_string(v), p, p * v, microbatches, std::vector<std::vector<Action>>(p), {}};
  const int total = microbatches * v;  // chunk-steps per rank, each direction
  // The i-th forward (or backward) chunk-step of a rank: groups of p consecutive steps share a
  // chunk; after v groups the next p micro-batches start again at chunk 0.
  const auto microbatch_of = [&](int step) { return (step / (p * v)) * p + step % p; };
  const auto forward_chunk = [&](int step) { return (step / p) % v; };
  const auto backward_chunk = [&](int step) { return v - 1 - (step / p) % v; };
  for (int r = 0; r < p; ++r) {
    auto& out = s.ranks[r];
    const int warmup = std::min(total, 2 * (p - r - 1) + (v - 1) * p);
    const auto forward = [&](int step) {
      out.push_back({forward_chunk(step) * p + r, Op::kForward, microbatch_of(step)});
    };
    const auto backward = [&](int step) {
      out.push_back({backward_chunk(step) * p + r, Op::kBackward, microbatch_of(step)});
    };
    for (int i = 0; i < warmup; ++i) {
      forward(i);
    }
    for (int i = 0; i < total - warmup; ++i) {
      forward(warmup + i);
      backward(i);
    }
    for (int i = total - warmup; i < total; ++i) {
      backward(i);
    }
  }
  return s;
}

}  // namespace contend::schedule
