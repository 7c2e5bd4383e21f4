#include "contend/pipeline/lowered_cache.h"

#include "contend/schedule/generators.h"

namespace contend::pipeline {

LoweredCache::LoweredCache(int ranks, int microbatches) : ranks_(ranks), microbatches_(microbatches) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1, "LoweredCache needs ranks and micro-batches");
}

const schedule::Schedule& LoweredCache::kfkb(int k) {
  auto [pos, fresh] = by_k_.try_emplace(k);
  if (fresh) {
    pos->second = schedule::lower(schedule::kfkb(ranks_, microbatches_, k));
  }
  return pos->second;
}

}  // namespace contend::pipeline
