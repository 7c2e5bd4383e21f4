#pragma once
// Coordinator: makes every rank run the same k in an iteration, deciding at rank 0 and carrying
// the decision in band, over the pipeline's own connections (no other channel is needed on a
// cluster, and nothing waits on a third party):
//  1. before iteration i >= 1, the last rank sends its report of iteration i-1 to rank p-2; each
//     rank puts its own report in front and passes the list on, so rank 0 ends up with every
//     rank's. These small messages follow each rank's last gradient on the same connection, while
//     the earlier ranks are still running their last backwards, so they arrive about when they
//     are needed;
//  2. rank 0 asks its policy and sends k to rank 1, which passes it on, and so on. On each
//     connection the decision goes ahead of the iteration's first activation, which every rank
//     but the first waits for anyway.
// The cost per iteration is the policy's decision time at rank 0 plus one small message per hop
// (measured in bench/adaptive_bench.cpp and docs/adaptive.md). With `probe_bytes`, before
// iteration 0 every rank sends kProbeFrames tensors of that size to each neighbour and reads
// theirs, and rank 0 decides iteration 0 on their reports (the links measured, no compute yet):
// the first measurements, at the cost of those transfers. Not thread-safe: one per rank, on its
// compute thread.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "contend/common/result.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline {

class Coordinator {
 public:
  // `policy` is rank 0's (nullptr elsewhere). Waits for a neighbour at most `timeout`.
  Coordinator(int rank, int world_size, Transport& transport, std::unique_ptr<KPolicy> policy,
              std::chrono::milliseconds timeout, std::uint64_t probe_bytes = 0);

  // The decision for `iteration`; `mine` is this rank's report of the iteration before (nullopt
  // before the first). At rank 0 the full decision; elsewhere its iteration and k. Errors: a
  // broken or silent neighbour, the policy's own errors (no k fits the memory limit).
  Result<Decision> agree(int iteration, const std::optional<StageReport>& mine);

 private:
  Result<std::vector<StageReport>> gather(int iteration, const StageReport& mine);
  // The probe of the links to both neighbours: this rank's report of it.
  Result<StageReport> probe();

  int rank_;
  int world_size_;
  Transport& transport_;
  std::unique_ptr<KPolicy> policy_;
  std::chrono::milliseconds timeout_;
  std::uint64_t probe_bytes_;
};

// Doubles in tensor buffers, for the control messages (exact: two floats' bits per double).
std::vector<float> pack_doubles(const std::vector<double>& values);
std::vector<double> unpack_doubles(const std::vector<float>& data);

}  // namespace contend::pipeline
