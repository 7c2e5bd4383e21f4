#include <algorithm>

#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

// Appends rank r's actions on its two chunks (stage r going down the V, stage 2p-1-r coming back).
// Micro-batch numbers count per chunk and per kind, so every chunk runs them in order.
class VRank {
 public:
  VRank(int r, int p, std::vector<Action>& out) : stage_{r, 2 * p - 1 - r}, out_(out) {}
  void f(int c) { out_.push_back({stage_[c], Op::kForward, f_[c]++}); }
  void i(int c) { out_.push_back({stage_[c], Op::kBackwardInput, i_[c]++}); }
  void w(int c) { out_.push_back({stage_[c], Op::kBackwardWeight, w_[c]++}); }
  void iw(int c) {
    i(c);
    w(c);
  }
  int forwards(int c) const { return f_[c]; }
  int inputs(int c) const { return i_[c]; }
  int weights(int c) const { return w_[c]; }

 private:
  int stage_[2];
  int f_[2] = {0, 0};
  int i_[2] = {0, 0};
  int w_[2] = {0, 0};
  std::vector<Action>& out_;
};

// PyTorch's ScheduleZBVZeroBubble for rank r, over n >= 2p-1 micro-batches.
void zbv_rank(VRank& v, int r, int p, int n) {
  for (int k = 0; k < 2 * (p - r) - 1; ++k) {
    v.f(0);
  }
  for (int k = 0; k < r; ++k) {
    v.f(1);
    v.f(0);
  }
  for (int k = 0; k < p - r; ++k) {
    v.f(1);
    v.iw(1);
  }
  // Steady state: the first chunk's forwards run ahead of the second's by the warm-up.
  while (v.forwards(1) < v.forwards(0) || v.forwards(0) < n) {
    if (v.forwards(0) < n) {
      v.f(0);
    }
    v.iw(0);
    v.f(1);
    v.iw(1);
  }
  for (int k = 0; k < r; ++k) {
    v.i(0);
    v.i(1);
  }
  for (int k = 0; k < p - r; ++k) {
    v.iw(0);
  }
  while (v.weights(1) < v.inputs(1)) {
    v.w(1);
  }
  while (v.weights(0) < v.inputs(0)) {
    v.w(0);
  }
}

}  // namespace

Schedule zbv(int ranks, int microbatches) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "zbv needs ranks and microbatches >= 1");
  Schedule s{"zbv", ranks, 2 * ranks, microbatches, std::vector<std::vector<Action>>(ranks), v_placement(ranks)};
  // The pattern needs 2p-1 micro-batches to fill the V; with fewer, PyTorch builds it for 2p-1 and
  // drops the actions of the micro-batches that do not exist.
  const int n = std::max(2 * ranks - 1, microbatches);
  for (int r = 0; r < ranks; ++r) {
    VRank v(r, ranks, s.ranks[r]);
    zbv_rank(v, r, ranks, n);
    std::erase_if(s.ranks[r], [&](const Action& a) { return a.microbatch >= microbatches; });
  }
  return s;
}

}  // namespace contend::schedule
