#pragma once
// Policies that choose each iteration's k, behind one interface, so a comparison runs all of them
// through the same protocol (coordinator.h) and logs them alike:
//  - fixed:k      the same k every iteration (kFkB through the adaptive path, for comparisons);
//  - adaptive     Ada-Grouper from in-band measurements only (adaptive.h);
//  - oracle       the scenario's ground truth of every link's rate, for experiments only: it reads
//                 what a real system cannot know, and results label it so.
// Options follow the name: `adaptive:kmax=8,mem=64MiB,period=2`, `oracle:inflight=8`,
// `fixed:k=2` (or `fixed:2`). Not thread-safe: one policy, at rank 0.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/rate_trace.h"
#include "contend/common/result.h"
#include "contend/pipeline/adaptive.h"
#include "contend/pipeline/transport.h"

namespace contend::pipeline {

struct PolicySpec {
  std::string kind;  // "fixed", "adaptive" or "oracle"
  int k = 1;         // fixed
  AdaptiveOptions options;
};

// True when `schedule` names a policy rather than a static schedule.
bool is_policy(const std::string& schedule);

// Parses a policy name with its options. kInvalidArgument names the bad option and lists the
// known ones: kmin, kmax, mem (size), inflight, period, hysteresis, lean; fixed takes k.
Result<PolicySpec> parse_policy(const std::string& text);

// What one rank measured in the iteration it just ran, sent to rank 0.
struct StageReport {
  double forward_s = 0;  // per micro-batch, mean
  double backward_s = 0;
  std::uint64_t message_bytes = 0;  // activation sent forward (and gradient back)
  std::uint64_t stash_bytes = 0;    // held per in-flight micro-batch
  TransferTotals from_prev;         // activations received from rank - 1
  TransferTotals from_next;         // gradients received from rank + 1
};

// The oracle's ground truth: the rate the workload gets on each link (r -> r+1) over scenario
// time, and the current scenario time.
struct OracleTruth {
  std::vector<RateTrace> links;
  std::function<double()> now_s;
  // The token-bucket depth the shaper gives a link at a rate; unset: the measured burst.
  std::function<std::uint64_t(double rate_bps)> burst_bytes;
};

class KPolicy {
 public:
  virtual ~KPolicy() = default;
  // The k of `iteration`, from every rank's report of the iteration before (`reports` is empty
  // before the first). Errors: no k fits the memory limit.
  virtual Result<Decision> decide(int iteration, const std::vector<StageReport>& reports) = 0;
};

// A policy for a pipeline of `stages` stages and `microbatches` micro-batches. The oracle
// requires `truth` with one trace per link.
Result<std::unique_ptr<KPolicy>> make_policy(const PolicySpec& spec, int stages, int microbatches,
                                             std::optional<OracleTruth> truth = std::nullopt);

}  // namespace contend::pipeline
