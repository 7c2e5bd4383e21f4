#pragma once
// Private: the order in which a rank of an interleaved schedule (looped placement: chunk c of rank
// r is stage c*p + r) visits its chunks, as Megatron-LM's schedule table lays it out
// (get_schedule_table): micro-batches form groups of `group`; a group runs on chunk 0, then on
// chunk 1, ..., then the next group starts; the last group holds what is left (m - its start).
// Forward step i runs chunk(i) on microbatch(i); backward step i runs chunk v-1-chunk(i) on the same
// micro-batch, so each chunk sees its micro-batches in order both ways. PyTorch's interleaved
// schedules use the same table with group = its micro-batches per round. Plain value.

#include "contend/schedule/action.h"

namespace contend::schedule::detail {

class ChunkOrder {
 public:
  ChunkOrder(int microbatches, int chunks, int group)
      : m_(microbatches), v_(chunks), g_(group), full_groups_((microbatches - 1) / group) {}

  int steps() const { return m_ * v_; }
  int chunk(int step) const {
    const int before = full_groups_ * g_ * v_;
    return step < before ? (step % (g_ * v_)) / g_ : (step - before) / last_group();
  }
  int microbatch(int step) const {
    const int before = full_groups_ * g_ * v_;
    return step < before ? (step / (g_ * v_)) * g_ + step % g_ : full_groups_ * g_ + (step - before) % last_group();
  }
  Action forward(int step, int rank, int ranks) const {
    return {chunk(step) * ranks + rank, Op::kForward, microbatch(step)};
  }
  Action backward(int step, int rank, int ranks, Op op) const {
    return {(v_ - 1 - chunk(step)) * ranks + rank, op, microbatch(step)};
  }

 private:
  int last_group() const { return m_ - full_groups_ * g_; }

  int m_;
  int v_;
  int g_;
  int full_groups_;  // the groups before the last one
};

}  // namespace contend::schedule::detail
