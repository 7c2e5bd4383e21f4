#pragma once
// Private: the iterations of one closed-loop job (a flow's or traffic entry's "iterate"), shared by
// its flows in a FlowEngine. Each flow's source computes, sends its bytes for the iteration and
// waits for the iteration's end; each flow's sink reports what arrives; the iteration ends when
// every flow of the job received its bytes (a collective ends with its slowest transfer), and
// the job's iteration times are the times between consecutive ends. Thread-safe.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace contend::emulator {

class JobIterations {
 public:
  // A job of `flows` flows that each send `bytes` per iteration.
  JobIterations(int flows, std::uint64_t bytes);

  // The slot of the flow named `flow` (the same on a restart), its first call at `now_s`
  // starting the job's clock. Slots beyond the job's flows share the last one's.
  int join(const std::string& flow, double now_s);
  // The sink of `slot` received `n` bytes at `now_s`: when every slot has its bytes, the
  // iteration ends (bytes beyond an iteration's count toward the next).
  void received(int slot, std::uint64_t n, double now_s);
  // The iteration in progress (0 first): a source sends for this one.
  std::uint64_t current() const;
  // Waits until iteration `i` ended (true) or `stop` is set (false), looking at `stop` every 50 ms.
  bool wait_end(std::uint64_t i, const std::atomic<bool>& stop);
  // The job's first slot at or after `now_s`: its start plus a whole number of `period_s`.
  double next_slot_s(double now_s, double period_s) const;

  // Iterations ended so far.
  std::uint64_t iterations() const;
  // The median time between consecutive ends, the first iteration's from the first join; 0
  // before one ended.
  double median_iteration_s() const;

 private:
  void end_iteration(double now_s);  // under mutex_

  const std::uint64_t bytes_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  std::map<std::string, int> slots_;
  std::vector<std::uint64_t> pending_;  // bytes received toward the iteration in progress
  std::vector<bool> done_;              // whether the slot has its bytes for it
  int done_count_ = 0;
  std::uint64_t current_ = 0;
  double start_s_ = -1;
  std::vector<double> ends_s_;
};

}  // namespace contend::emulator
