#include "contend/pipeline/transport/stall_clock.h"

#include <algorithm>
#include <thread>

namespace contend::pipeline {

StallClock::StallClock(int delegates) : delegates_(static_cast<std::size_t>(std::max(1, delegates))) {}

StallClock::Clock::time_point StallClock::start(Clock::time_point queued) const {
  const Clock::time_point free = sent_.size() < delegates_ ? queued : std::max(queued, sent_.front());
  return std::min(free, Clock::now());
}

void StallClock::wait(Clock::time_point start, double stall_s) {
  std::this_thread::sleep_until(start +
                                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stall_s)));
}

void StallClock::sent(Clock::time_point at) {
  sent_.push_back(at);
  if (sent_.size() > delegates_) {
    sent_.pop_front();
  }
}

}  // namespace contend::pipeline
