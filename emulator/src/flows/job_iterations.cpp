#include "flows/job_iterations.h"

#include <algorithm>
#include <chrono>

#include "contend/common/median.h"
#include "contend/emulator/scenario/events.h"

namespace contend::emulator {

JobIterations::JobIterations(int flows, std::uint64_t bytes)
    : bytes_(bytes),
      pending_(static_cast<std::size_t>(std::max(flows, 1)), 0),
      done_(static_cast<std::size_t>(std::max(flows, 1)), false) {}

int JobIterations::join(const std::string& flow, double now_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (start_s_ < 0) {
    start_s_ = now_s;
  }
  const int last = static_cast<int>(pending_.size()) - 1;
  const auto [it, fresh] = slots_.try_emplace(flow, std::min(static_cast<int>(slots_.size()), last));
  return it->second;
}

void JobIterations::received(int slot, std::uint64_t n, double now_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto i = static_cast<std::size_t>(slot);
  pending_[i] += n;
  // An iteration's bytes may arrive in one read with the next one's start: each completes one.
  while (!done_[i] && pending_[i] >= bytes_) {
    pending_[i] -= bytes_;
    done_[i] = true;
    if (++done_count_ == static_cast<int>(done_.size())) {
      end_iteration(now_s);
    }
  }
}

void JobIterations::end_iteration(double now_s) {
  ends_s_.push_back(now_s);
  ++current_;
  done_count_ = 0;
  for (std::size_t i = 0; i < done_.size(); ++i) {
    done_[i] = pending_[i] >= bytes_;  // a slot whose next bytes are in already
    if (done_[i]) {
      pending_[i] -= bytes_;
      ++done_count_;
    }
  }
  ended_.notify_all();
}

std::uint64_t JobIterations::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

bool JobIterations::wait_end(std::uint64_t i, const std::atomic<bool>& stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (current_ <= i) {
    if (stop.load()) {
      return false;
    }
    ended_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return true;
}

double JobIterations::next_slot_s(double now_s, double period_s) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_job_slot_s(start_s_, now_s, period_s);
}

std::uint64_t JobIterations::iterations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ends_s_.size();
}

double JobIterations::median_iteration_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<double> times;
  double last = start_s_;
  for (double end : ends_s_) {
    times.push_back(end - last);
    last = end;
  }
  return median(std::move(times));
}

}  // namespace contend::emulator
