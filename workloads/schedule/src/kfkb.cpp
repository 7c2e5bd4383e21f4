#include <algorithm>

#include "contend/schedule/generators.h"

namespace contend::schedule {

Schedule kfkb(int ranks, int microbatches, int k) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1 && k >= 1, "kfkb needs ranks, microbatches and k >= 1");
  Schedule s{"kfkb:k=" + std::to_string(k), ranks, ranks, microbatches, std::vector<std::vector<Action>>(ranks), {}};
  const long long m = microbatches;
  for (int r = 0; r < ranks; ++r) {
    auto& out = s.ranks[r];
    // 64-bit product: k * (p - s - 1) overflows int for large k.
    const int warmup = static_cast<int>(std::min<long long>(m, static_cast<long long>(k) * (ranks - r - 1)));
    int f = 0;
    int b = 0;
    while (f < warmup) {
      out.push_back({r, Op::kForward, f++});
    }
    while (f < microbatches) {
      for (const int end = std::min(microbatches, f + k); f < end;) {
        out.push_back({r, Op::kForward, f++});
      }
      for (const int end = std::min(microbatches, b + k); b < end;) {
        out.push_back({r, Op::kBackward, b++});
      }
    }
    while (b < microbatches) {
      out.push_back({r, Op::kBackward, b++});
    }
  }
  return s;
}

}  // namespace contend::schedule
