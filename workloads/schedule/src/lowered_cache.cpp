#include "contend/schedule/lowered_cache.h"

#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

namespace contend::schedule {

LoweredCache::LoweredCache(int ranks, int microbatches) : ranks_(ranks), microbatches_(microbatches) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "LoweredCache needs ranks and micro-batches");
}

const LoweredCache::Entry& LoweredCache::entry(const Spec& spec) {
  auto [pos, fresh] = by_spec_.try_emplace(spec.str());
  if (fresh) {
    auto made = make_schedule(spec, ranks_, microbatches_);
    if (made) {
      pos->second.builds = true;
      pos->second.peak_inflight = schedule::peak_inflight(*made);
      pos->second.lowered = lower(*made);
    }
  }
  return pos->second;
}

bool LoweredCache::builds(const Spec& spec) {
  return entry(spec).builds;
}

const Schedule& LoweredCache::get(const Spec& spec) {
  const Entry& e = entry(spec);
  CONTEND_CHECK(e.builds, "a policy chose a schedule that does not build: " + spec.str());
  return e.lowered;
}

const std::vector<int>& LoweredCache::peak_inflight(const Spec& spec) {
  const Entry& e = entry(spec);
  CONTEND_CHECK(e.builds, "peak_inflight of a schedule that does not build: " + spec.str());
  return e.peak_inflight;
}

const Schedule& LoweredCache::kfkb(int k) {
  return get(kfkb_spec(k));
}

}  // namespace contend::schedule
