#include <deque>

#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

// Rank r's two stages, r (first) and 2p-1-r (second), with per-stage counters: F numbers its own
// micro-batches, B and I share one counter (a micro-batch's backward is either), and W runs the
// oldest I still waiting for it, whichever stage it was on.
class DualRank {
 public:
  DualRank(int r, int p, std::vector<Action>& out) : stage_{r, 2 * p - 1 - r}, out_(out) {}
  void f(int c) { out_.push_back({stage_[c], Op::kForward, f_[c]++}); }
  void b(int c, bool split) {
    out_.push_back({stage_[c], split ? Op::kBackwardInput : Op::kBackward, b_[c]++});
    if (split) {
      pending_.push_back(out_.back());
    }
  }
  void w() {
    if (!pending_.empty()) {
      out_.push_back({pending_.front().stage, Op::kBackwardWeight, pending_.front().microbatch});
      pending_.pop_front();
    }
  }
  // PyTorch's OVERLAP_F_B (a forward of one chunk beside a backward of the other, for a runtime
  // that overlaps them) runs here as the forward, then the backward.
  void overlap(int forward_chunk, int backward_chunk) {
    f(forward_chunk);
    b(backward_chunk, false);
  }

 private:
  int stage_[2];
  int f_[2] = {0, 0};
  int b_[2] = {0, 0};
  std::deque<Action> pending_;
  std::vector<Action>& out_;
};

// The eight phases of PyTorch's ScheduleDualPipeV (after DeepSeek's DualPipe) for rank r.
void dualpipev_rank(DualRank& d, int r, int p, int m) {
  for (int k = 0; k < 2 * (p - r - 1); ++k) {
    d.f(0);
  }
  for (int k = 0; k < r + 1; ++k) {
    d.f(0);
    d.f(1);
  }
  for (int k = 0; k < p - r - 1; ++k) {
    d.b(1, true);
    d.w();
    d.f(1);
  }
  for (int k = 0; k < m - 2 * p + r + 1; ++k) {
    d.overlap(0, 1);
    d.overlap(1, 0);
  }
  for (int k = 0; k < p - r - 1; ++k) {
    d.b(1, false);
    d.overlap(1, 0);
  }
  // The last backwards switch to I (deferring W) halfway, the second chunk first on odd ranks.
  bool split = false;
  for (int k = 0; k < r + 1; ++k) {
    split = split || (k == (r + 1) / 2 && r % 2 == 1);
    d.b(1, split);
    split = split || (k == (r + 1) / 2 && r % 2 == 0);
    d.b(0, split);
  }
  for (int k = 0; k < p - r - 1; ++k) {
    d.w();
    d.b(0, split);
  }
  for (int k = 0; k < r + 1; ++k) {
    d.w();
  }
}

}  // namespace

Result<Schedule> dualpipev(int ranks, int microbatches) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "dualpipev needs ranks and microbatches >= 1");
  if (microbatches < 2 * ranks) {
    return make_error(Errc::kInvalidArgument, "dualpipev needs at least as many micro-batches as stages (2 x " +
                                                  std::to_string(ranks) + " ranks = " + std::to_string(2 * ranks) +
                                                  "), got " + std::to_string(microbatches) +
                                                  ", as PyTorch's ScheduleDualPipeV does");
  }
  Schedule s{"dualpipev", ranks, 2 * ranks, microbatches, std::vector<std::vector<Action>>(ranks), v_placement(ranks)};
  for (int r = 0; r < ranks; ++r) {
    DualRank d(r, ranks, s.ranks[r]);
    dualpipev_rank(d, r, ranks, microbatches);
  }
  return s;
}

}  // namespace contend::schedule
