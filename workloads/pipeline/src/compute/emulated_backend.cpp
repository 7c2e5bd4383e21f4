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
  void take(std::chrono::nanoseconds d) const {
    if (d.count() <= 0) {
      return;
    }
    if (!c_.spin) {
      std::this_thread::sleep_for(d);
      return;
    }
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  EmulatedCompute c_;
  std::uint64_t held_ = 0;
};

}  // namespace

std::unique_ptr<ComputeBackend> make_emulated_backend(const EmulatedCompute& config, int stage, int num_stages) {
  return std::make_unique<EmulatedBackend>(config, stage, num_stages);
}

}  // namespace contend::pipeline
