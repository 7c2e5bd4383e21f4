#pragma once
// Private: rank 0's view of the stages' reports, shared by the policies that decide on them
// (adaptive_policy.cpp, pipemorph_policy.cpp): the links as measured in band, and a probe's
// reports completed with what is known of the stages beforehand. Not thread-safe: rank 0's.

#include <vector>

#include "contend/pipeline/policy/adaptive.h"
#include "contend/pipeline/policy/policy.h"

namespace contend::pipeline::detail {

// Rank 0's view of the links from every rank's report, per direction: the sustained rate (second
// halves of the iteration's last frames, so a change late in an iteration counts), the burst the
// token bucket gave on top, and the stall the sender's clock shows. Settled against noise, but not
// against a change that costs time: the rate is the median of the last kSettle iterations' (a
// token bucket's burst reads a quiet link's rate 2-20x high, and ordinary readings vary 10%
// here), unless the last is below kDrop of that median, when a drop is read at once; likewise the
// stall is the median unless the last is kDrop above it. So a steady network's decisions rest on
// the same numbers, and a preemption is met at the next iteration. A recovery is read at once
// too: a rate back within kDrop of the level it dropped from (one it held over two readings at
// least), taken at most at that level (a bucket's burst reads higher); a rise to a level not seen
// before is settled as noise is.
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
    std::vector<double> rates;   // the last kSettle iterations' readings...
    std::vector<double> stalls;  // ...of each
    double dropped_from = 0;     // the level held before the last drop; 0: no drop yet
  };
  static constexpr std::size_t kSettle = 3;
  static constexpr double kDrop = 0.7;
  struct Link {
    Direction forward;
    Direction backward;
  };
  // A stall shows only on the sender's clock: a tensor takes it longer than the same tensors took
  // the wire as their receiver timed them. Below kMinStall, or kMinStallShare of a tensor's wire
  // time, it is the copy's time or the rate's noise (a rate read 10% off moves the wire time 10%),
  // and the latency fit's to model.
  static constexpr double kMinStall = 1e-3;
  static constexpr double kMinStallShare = 0.25;
  static void add(Direction& d, const TransferTotals& t, const SendTotals& sent);
  // The settled value of `seen` after `latest` (appended, kSettle kept): the median, or `latest`
  // where it is worse than the median by the factor kDrop (`worse`: lower for a rate, higher for
  // a stall).
  static double settle(std::vector<double>& seen, double latest, bool lower_is_worse);
  // The same for a rate, which also reads a recovery from its last drop at once.
  static double settle_rate(Direction& d, double latest);
  std::vector<Link> links_;
};

// Whether `reports` are a probe's: the links only, no compute measured yet (and a prior to model
// the compute by).
bool probed(const std::vector<StageReport>& reports, const std::vector<StageMeasurement>& prior);
// A probe's reports with the compute as known beforehand.
void with_prior(std::vector<StageReport>& reports, const std::vector<StageMeasurement>& prior);

}  // namespace contend::pipeline::detail
