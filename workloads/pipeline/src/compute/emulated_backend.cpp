#include <sys/prctl.h>

#include <limits>
#include <thread>

#include "contend/pipeline/compute/backend.h"

namespace contend::pipeline {
namespace {

class EmulatedBackend : public ComputeBackend {
 public:
  EmulatedBackend(const EmulatedCompute& config, int stage, int num_stages) : c_(config) {
    (void)stage;
    (void)num_stages;
  }

  std::size_t message_floats() const override { return (c_.activation_bytes + 3) / 4; }

  void forward(int, int, const std::vector<float>&, std::vector<float>& out) override {
    take(c_.forward);
    out.resize(message_floats());
    held_ += c_.activation_bytes;
  }
  void backward(int, int, const std::vector<float>&, std::vector<float>& grad_in) override {
    take(c_.backward);
    grad_in.resize(message_floats());
    held_ -= c_.activation_bytes;
  }
  void backward_input(int, int, const std::vector<float>&, std::vector<float>& grad_in) override {
    take(std::chrono::duration_cast<std::chrono::nanoseconds>(c_.backward * (1 - c_.weight_fraction)));
    grad_in.resize(message_floats());
  }
  void backward_weight(int, int) override {
    take(std::chrono::duration_cast<std::chrono::nanoseconds>(c_.backward * c_.weight_fraction));
    held_ -= c_.activation_bytes;
  }
  void step() override {}
  double loss() const override { return std::numeric_limits<double>::quiet_NaN(); }
  std::uint64_t held_bytes() const override { return held_; }

 private:
  // Each op takes its declared time. A sleep alone wakes late (the timer's slack and the VM's
  // wake-up: 80-90 us after a 4 ms sleep here, 30-40 us with the slack at 1 ns): an iteration of
  // 8 + 16 ms micro-batches took 1.1% more than declared under 1F1B and 1.4% under zero bubble,
  // whose backward is two ops. So a sleep ends kSpinTail early and the rest is spun: 0.1% more
  // (bench/emulated_compute.sh), for about 1% of a core at 10 ms ops.
  void take(std::chrono::nanoseconds d) const {
    if (d.count() <= 0) {
      return;
    }
    const auto end = std::chrono::steady_clock::now() + d;
    if (!c_.spin && d > kSpinTail) {
      tighten_timer_slack();
      std::this_thread::sleep_until(end - kSpinTail);
    }
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  static constexpr std::chrono::microseconds kSpinTail{100};
  // The calling thread's timer slack (50 us by default) to 1 ns, once per thread.
  static void tighten_timer_slack() {
    thread_local const bool done = prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
    (void)done;
  }
  EmulatedCompute c_;
  std::uint64_t held_ = 0;
};

}  // namespace

std::unique_ptr<ComputeBackend> make_emulated_backend(const EmulatedCompute& config, int stage, int num_stages) {
  return std::make_unique<EmulatedBackend>(config, stage, num_stages);
}

}  // namespace contend::pipeline
