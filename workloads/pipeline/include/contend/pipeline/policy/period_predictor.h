#pragma once
// Prediction of periodic preemption from rank 0's own link history: every decision records each
// link's measured rate at that moment; where a link's drops recur at a steady period, the
// predictor says when the next drop and recovery come and gives each link's rate over the coming
// iteration as a trace, which the controller then uses as the oracle uses the truth. Where the
// history shows no period (fewer than kMinDrops drops, or gaps between them, or drop lengths,
// that differ from their median by more than a tenth plus the spacing of the samples around the
// changes they join), it predicts nothing and the policy reacts to what it measured. A drop is a
// sample below kLowFraction of the highest rate held over two samples in a row. Pure; not
// thread-safe (one, at rank 0).

#include <optional>
#include <vector>

#include "contend/common/rate_trace.h"

namespace contend::pipeline {

class PeriodPredictor {
 public:
  explicit PeriodPredictor(int links) : links_(links) {}

  // The rates each link (r -> r+1) gave, as measured at time `t_s` (any monotonic clock,
  // non-decreasing across calls; 0 bps: not measured, ignored).
  void record(double t_s, const std::vector<double>& link_bps);

  // Each link's rate from `now_s` on (time 0 of each trace = now_s), where at least one link is
  // periodic; links without a period hold their last rate. nullopt when no link is periodic.
  std::optional<std::vector<RateTrace>> predict(double now_s) const;

  // A link's period as the history shows it (for tests and logs).
  struct Period {
    double period_s = 0;  // from one drop to the next
    double on_s = 0;      // how long a drop lasts
    double last_drop_s = 0;
    double low_bps = 0;  // the rate during a drop, and between them
    double high_bps = 0;
  };
  std::optional<Period> period(int link) const;

  static constexpr int kMinDrops = 4;              // drops seen before a period is believed
  static constexpr double kTolerance = 0.1;        // gaps within this fraction of their median
  static constexpr double kLowFraction = 0.7;      // below this fraction of the high rate: a drop
  static constexpr std::size_t kMaxSamples = 512;  // the history kept per link

 private:
  struct Sample {
    double t_s;
    double bps;
  };
  // The highest rate held over two samples in a row (a single sample is its own level).
  static double held_high(const std::vector<Sample>& samples);
  std::vector<std::vector<Sample>> links_;
};

}  // namespace contend::pipeline
