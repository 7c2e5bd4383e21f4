#pragma once
// The lowered schedules a policy switches between, by spec, each made and lowered once: every
// rank's executor, the adaptive controller's predictions and simulated runs take them from here.
// Not thread-safe: one cache per user.

#include <map>
#include <string>
#include <vector>

#include "contend/common/spec.h"

#include "contend/schedule/schedule.h"

namespace contend::schedule {

class LoweredCache {
 public:
  // Requires ranks >= 1 and microbatches >= 1.
  LoweredCache(int ranks, int microbatches);
  // Whether `spec` builds for this shape (an interleaved group must suit the micro-batches).
  bool builds(const Spec& spec);
  // The lowered schedule `spec` names (one that builds: what policies decide; anything else is a
  // bug), and its peak in-flight activations per rank. References stay valid while the cache lives.
  const Schedule& get(const Spec& spec);
  const std::vector<int>& peak_inflight(const Spec& spec);
  // get() of kFkB with group size `k`.
  const Schedule& kfkb(int k);

 private:
  struct Entry {
    bool builds = false;
    Schedule lowered;
    std::vector<int> peak_inflight;
  };
  const Entry& entry(const Spec& spec);
  int ranks_;
  int microbatches_;
  std::map<std::string, Entry> by_spec_;
};

}  // namespace contend::schedule
