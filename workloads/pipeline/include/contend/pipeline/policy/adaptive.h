#pragma once
// The core of adaptive kFkB (Ada-Grouper) and of per-stage slackness (Adaptra): from in-band
// measurements (per-stage compute times, per-link goodput), predict each feasible candidate's
// iteration time with the simulator and choose k, the slack vector or both, under a per-stage
// memory limit, with hysteresis so noise does not flip it. Pure: the runtime
// feeds it measurements and applies its decisions at iteration boundaries (policy.h,
// coordinator.h). Not thread-safe: one controller, at the rank that decides.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "contend/common/rate_trace.h"
#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/pipeline/policy/measurements.h"
#include "contend/schedule/lowered_cache.h"
#include "contend/schedule/schedule.h"
#include "contend/sim/sim_config.h"

namespace contend::pipeline {

// What the controller moves: kFkB's k (Ada-Grouper), the slack vector (Adaptra: extra warm-up
// forwards on the stages in front of slow links, at k_min), or both together.
enum class Knobs { kK, kSlack, kBoth };

struct AdaptiveOptions {
  int k_min = 1;
  int k_max = 0;                         // 0: the number of micro-batches
  std::uint64_t memory_limit_bytes = 0;  // per stage, stash bytes; 0: no limit
  int max_inflight = 0;                  // per stage, in micro-batch activations; 0: no limit
  int period = 1;                        // re-evaluate every `period` iterations
  double hysteresis = 0.05;              // switch to a larger k only when it is predicted this much faster
  double lean = 0.005;                   // the smallest k within this fraction of the fastest wins:
                                         // no extra memory for a gain measurement noise could undo;
                                         // a smaller k within it of the current k is taken at once
  int chunks = 1;                        // 1: choose kFkB's k; v >= 2: the group of interleaved:v
  Knobs knobs = Knobs::kK;               // slack needs chunks 1 (with more, kBoth moves k only)
  bool predict = false;                  // the policy predicts periodic preemption (period_predictor.h)
  bool zero_bubble = false;              // with slack: also zero bubble, its warm-up adapted (chunks 1)
};

struct Decision {
  int iteration = 0;
  int k = 1;      // the chosen group size (kFkB's k), for logs
  Spec schedule;  // what the iteration runs: a static schedule spec ("kfkb:k=2")
  bool switched = false;
  bool evaluated = false;                           // false between re-evaluation periods
  std::vector<std::pair<int, double>> predicted_s;  // feasible k -> predicted iteration time
  std::vector<double> link_bps;                     // the rates the prediction used, r -> r+1
  std::vector<double> stall_s;                      // the links' stalls it used (a straggler's wait)
  std::vector<int> extra;                           // the slack vector chosen; empty: none
  int candidates = 0;                               // schedules simulated for this decision
  bool predicted = false;                           // decided on the links' predicted rates (a period in their history)
  double latency_s = 0;                             // the latency per transfer the prediction used (fitted in band)
};

class AdaptiveController {
 public:
  // Requires stages >= 1, microbatches >= 1, 1 <= k_min.
  AdaptiveController(int stages, int microbatches, AdaptiveOptions options);

  // The k values whose schedules' peak in-flight activations (kFkB: min(m, k(p-s)) on stage s)
  // fit every stage's limits, ascending. Empty when even k_min does not fit.
  std::vector<int> feasible(const Measurements& m);
  // Whether `spec` builds here and its peak in-flight fits every stage's limits.
  bool fits(const Spec& spec, const Measurements& m);
  // The schedule a choice of k runs: kfkb:k=K, or interleaved:v=V,group=K.
  Spec candidate(int k) const;

  // The k to run in `iteration`. kInvalidArgument when the measurements do not match the
  // pipeline or no k fits the memory limit.
  Result<Decision> decide(int iteration, const Measurements& m);
  // The latency per transfer (every link's, each way) at which the simulator predicts
  // `measured_s` for the schedule that ran last (current()) under `m`, its links' own latencies
  // ignored: what the runtime costs a transfer beyond the wire, fitted in band. 0 when even none
  // predicts more than measured; at most 50 ms.
  Result<double> fit_latency(const Measurements& m, double measured_s);
  // The choice just made rests on a probe, not a measured iteration: the next decision chooses
  // afresh, without the hysteresis margin.
  void tentative() { tentative_ = true; }
  int k() const { return k_; }
  // The schedule the current choice runs (before any decision: k_min's).
  const Spec& current() const { return current_; }

 private:
  struct Candidate {
    Spec spec;
    int k = 1;
    std::vector<int> extra;
    double time_s = 0;
    double memory = 0;       // stash bytes over all stages at their peaks: what "leaner" means
    double drop_time_s = 0;  // predicted at Measurements::drop_bps (0: not simulated there)
  };
  // The candidates to simulate: every feasible k (knobs k; both: until kPatience k in a row were
  // no faster; slack: the first), then add_slack's.
  Result<std::vector<Candidate>> evaluate(const Measurements& m, const sim::SimConfig& config, Decision& d);
  // Slack vectors scaled from slack_estimate (every link's, and the slowest link's alone) and cut
  // to the memory limits, on the leanest and the fastest k so far.
  Result<void> add_slack(const Measurements& m, const sim::SimConfig& config, std::vector<Candidate>& out);
  // Zero bubble (ZB-H1) with its warm-up adapted: PipeMorph's rule for the measured stalls and for
  // none, and Adaptra's estimate; each that fits the memory limits (options_.zero_bubble).
  Result<void> add_zero_bubble(const Measurements& m, const sim::SimConfig& config, std::vector<Candidate>& out);
  static constexpr int kPatience = 3;
  Result<Candidate> simulate(const Spec& spec, int k, std::vector<int> extra, const Measurements& m,
                             const sim::SimConfig& config);
  // The most extra warm-up forwards each stage can take at group size k under the memory limits.
  std::vector<int> slack_caps(int k, const Measurements& m) const;
  // Picks from the candidates (the leanest about as fast as the fastest), with hysteresis against
  // the current schedule's predicted time (-1: it no longer fits).
  void choose(Decision& d, const std::vector<Candidate>& candidates, const Candidate* current, const Measurements& m);
  static double fastest_of(const std::vector<Candidate>& candidates);
  // Simulates the candidates within `lean` of the fastest at the drop to be ready for
  // (Measurements::drop_bps, drop_stall_s).
  Result<void> simulate_drop(const Measurements& m, std::vector<Candidate>& candidates);
  // Whether a message's time on some link, its stall included, moved by more than kChanged of the
  // slowest stage's forward plus backward since the current choice, and by more than
  // kChangedShare of itself (readings vary 10% between iterations of a steady link here: two of
  // them 20%).
  bool changed_since_chosen(const Measurements& m, const std::vector<double>& link_bps) const;
  static constexpr double kChanged = 0.05;
  static constexpr double kChangedShare = 0.25;

  int p_;
  int m_;
  AdaptiveOptions options_;
  int k_;
  Spec current_;
  std::vector<int> extra_;
  std::vector<double> chosen_at_bps_;    // the links' rates when the current schedule was chosen...
  std::vector<double> chosen_at_stall_;  // ...and their stalls
  bool decided_ = false;
  bool tentative_ = false;
  schedule::LoweredCache lowered_;
  std::map<int, Spec> candidates_;
};

}  // namespace contend::pipeline
