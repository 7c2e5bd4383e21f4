#pragma once
// Private: the player's sampling period, scaled to what a round of samples costs, so that the
// monitor takes at most a tenth of a CPU however many links a scenario has (a 64-node full mesh
// has 4,032 shaped ends; a round of their counters takes far longer than the 100 ms period). The
// period stays the configured one while rounds are cheap, and grows in whole multiples of it. A
// round's cost is judged by the cheapest of the last three, so one round slowed by a busy machine
// stretches nothing. Pure; not thread-safe.

#include <array>
#include <cstddef>

namespace contend::emulator {

class SamplePacer {
 public:
  // The share of one CPU that sampling may take.
  static constexpr double kCpuShare = 0.1;

  explicit SamplePacer(double base_s) : base_s_(base_s), period_s_(base_s) {}
  // After a round that took `cost_s` of wall time: the period until the next round.
  double after(double cost_s);
  double period_s() const { return period_s_; }
  // The cost the period was last judged on (the cheapest of the last three rounds).
  double cost_s() const { return cost_s_; }

 private:
  double base_s_;
  double period_s_;
  double cost_s_ = 0;
  std::array<double, 3> recent_{};
  std::size_t rounds_ = 0;
};

}  // namespace contend::emulator
