#pragma once
// Keeps every CPU of this machine from idling while it lives: one thread per CPU, pinned to it,
// spinning at SCHED_IDLE, the lowest priority (any other runnable thread takes the CPU from it at
// once, and it gets next to no share while they run). On a virtual machine an idle CPU halts, and
// waking it (a timer, a packet) waits for the hypervisor to run it again: every sleep and every
// wake-up of a cell is late by that, which /proc/stat counts as steal. A cluster node running a
// training step does not halt its CPUs. Measured (docs/experiment-format.md): paper.json's cells'
// steal from 2.4% (median; 18.8% at most) to 0.12% (1.9%). Not copyable; destroying it stops and
// joins the threads.

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "contend/common/result.h"

namespace contend {

class KeepAwake {
 public:
  // One spinning thread per CPU this process may run on. kUnsupported when the kernel refuses
  // SCHED_IDLE (nothing is left spinning at a higher priority).
  static Result<std::unique_ptr<KeepAwake>> start();
  ~KeepAwake();
  KeepAwake(const KeepAwake&) = delete;
  KeepAwake& operator=(const KeepAwake&) = delete;

  std::size_t threads() const { return threads_.size(); }

 private:
  KeepAwake() = default;
  std::atomic<bool> stop_{false};
  std::atomic<int> refused_{0};  // errno of a thread that could not lower itself; 0 when none
  std::atomic<int> ready_{0};
  std::vector<std::thread> threads_;
};

}  // namespace contend
