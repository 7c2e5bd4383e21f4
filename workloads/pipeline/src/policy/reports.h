#pragma once
// Private: rank 0's view of the stages' reports, shared by the policies that decide on them
// (adaptive_policy.cpp, pipemorph_policy.cpp): the links as measured in band, and a probe's
// reports completed with what is known of the stages beforehand. Not thread-safe: rank 0's.

#include <vector>

#include "contend/pipeline/policy/adaptive.h"
#include "contend/pipeline/policy/policy.h"

namespace contend::pipeline::detail {

// Rank 0's view of the links from every rank's report, per direction: the sustained rate (second
// halves of the iteration's last frames, so a change late in an iteration counts) and the burst
// the token bucket gave on top, as the last iteration measured them. No smoothing across
// iterations: the last frames already average four transfers, the controller's hysteresis keeps
// noise from moving k, and any lag costs throughput both ways (after a preemption the best k may
// be smaller or larger than during it).
class LinkEstimates {
 public:
  explicit LinkEstimates(int stages) : links_(stages > 1 ? stages - 1 : 0) {}
  // Takes the links' measurements from every rank's report of one iteration.
  void add(const std::vector<StageReport>& reports);
  // The stages as reported and the links as estimated so far.
  Measurements measurements(const std::vector<StageReport>& reports) const;

 private:
  struct Direction {
    double rate = 0;  // bits per second; 0 until measured
    double burst = 0;
    double stall_s = 0;
  };
  struct Link {
    Direction forward;
    Direction backward;
  };
  // A stall shows only on the sender's clock: a tensor takes it longer than its bytes take the
  // wire (receiver-timed). Below kMinStall it is the copy's time, and the latency fit's to model.
  static constexpr double kMinStall = 1e-3;
  static void add(Direction& d, const TransferTotals& t, const SendTotals& sent);
  std::vector<Link> links_;
};

// Whether `reports` are a probe's: the links only, no compute measured yet (and a prior to model
// the compute by).
bool probed(const std::vector<StageReport>& reports, const std::vector<StageMeasurement>& prior);
// A probe's reports with the compute as known beforehand.
void with_prior(std::vector<StageReport>& reports, const std::vector<StageMeasurement>& prior);

}  // namespace contend::pipeline::detail
