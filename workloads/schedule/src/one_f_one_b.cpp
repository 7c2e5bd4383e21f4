#include <algorithm>

#include "contend/schedule/generators.h"

namespace contend::schedule {

Schedule one_f_one_b(int ranks, int microbatches) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "1f1b needs ranks >= 1 and microbatches >= 1");
  Schedule s{"1f1b", ranks, ranks, microbatches, std::vector<std::vector<Action>>(ranks), {}};
  for (int r = 0; r < ranks; ++r) {
    auto& out = s.ranks[r];
    const int warmup = std::min(microbatches, ranks - r - 1);
    for (int mb = 0; mb < warmup; ++mb) {
      out.push_back({r, Op::kForward, mb});
    }
    for (int i = 0; i < microbatches - warmup; ++i) {
      out.push_back({r, Op::kForward, warmup + i});
      out.push_back({r, Op::kBackward, i});
    }
    for (int mb = microbatches - warmup; mb < microbatches; ++mb) {
      out.push_back({r, Op::kBackward, mb});
    }
  }
  return s;
}

}  // namespace contend::schedule
