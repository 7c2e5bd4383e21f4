#include "contend/schedule/generators.h"

namespace contend::schedule {

Schedule gpipe(int ranks, int microbatches) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "gpipe needs ranks >= 1 and microbatches >= 1");
  Schedule s{"gpipe", ranks, ranks, microbatches, std::vector<std::vector<Action>>(ranks), {}};
  for (int r = 0; r < ranks; ++r) {
    for (int mb = 0; mb < microbatches; ++mb) {
      s.ranks[r].push_back({r, Op::kForward, mb});
    }
    for (int mb = 0; mb < microbatches; ++mb) {
      s.ranks[r].push_back({r, Op::kBackward, mb});
    }
  }
  return s;
}

}  // namespace contend::schedule
