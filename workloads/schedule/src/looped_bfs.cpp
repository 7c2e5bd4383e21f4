#include "contend/schedule/generators.h"

namespace contend::schedule {

Schedule looped_bfs(int ranks, int microbatches, int v) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1 && v >= 1, "looped-bfs needs ranks, microbatches and v >= 1");
  Schedule s{"looped-bfs:v=" + std::to_string(v),     ranks, ranks * v, microbatches,
             std::vector<std::vector<Action>>(ranks), {}};
  for (int r = 0; r < ranks; ++r) {
    auto& out = s.ranks[r];
    // Breadth first: every micro-batch through a chunk before the next chunk starts.
    for (int c = 0; c < v; ++c) {
      for (int mb = 0; mb < microbatches; ++mb) {
        out.push_back({c * ranks + r, Op::kForward, mb});
      }
    }
    // Backwards from the last chunk down, and within a chunk from the last micro-batch down, as
    // PyTorch's ScheduleLoopedBFS runs them (the last forward's gradient is the first ready).
    for (int c = v - 1; c >= 0; --c) {
      for (int mb = microbatches - 1; mb >= 0; --mb) {
        out.push_back({c * ranks + r, Op::kBackward, mb});
      }
    }
  }
  return s;
}

}  // namespace contend::schedule
