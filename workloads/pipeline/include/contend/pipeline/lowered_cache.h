#pragma once
// The lowered schedules a policy switches between, each lowered once: every rank's executor, the
// adaptive controller's predictions and simulated runs take them from here. Not thread-safe: one
// cache per user.

#include <map>

#include "contend/schedule/schedule.h"

namespace contend::pipeline {

class LoweredCache {
 public:
  // Requires ranks >= 1 and microbatches >= 1.
  LoweredCache(int ranks, int microbatches);
  // Lowered kFkB with group size `k` (1 <= k): references stay valid while the cache lives.
  const schedule::Schedule& kfkb(int k);

 private:
  int ranks_;
  int microbatches_;
  std::map<int, schedule::Schedule> by_k_;
};

}  // namespace contend::pipeline
