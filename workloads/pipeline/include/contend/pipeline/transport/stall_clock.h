#pragma once
// When each tensor to one peer starts its stall (SendOptions::stall_s): PipeMorph's CPU delegates
// each sleep a stall before their send, so up to `delegates` tensors wait out theirs at once and
// the next starts its own once the tensor `delegates` before it has been sent. One per sending
// thread (one peer); not thread-safe.

#include <chrono>
#include <cstddef>
#include <deque>

namespace contend::pipeline {

class StallClock {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StallClock(int delegates);

  // When a tensor queued at `queued` starts its stall: once it is queued and a delegate is free,
  // at the latest now.
  Clock::time_point start(Clock::time_point queued) const;
  // Sleeps until `stall_s` after `start`.
  static void wait(Clock::time_point start, double stall_s);
  // A tensor left for the wire at `at`: its delegate is free.
  void sent(Clock::time_point at);

 private:
  std::size_t delegates_;
  std::deque<Clock::time_point> sent_;  // the last `delegates_` sends
};

}  // namespace contend::pipeline
