#include <cblas.h>

#include <cmath>
#include <limits>
#include <map>

#include "contend/pipeline/compute/backend.h"

namespace contend::pipeline {
namespace {

class CpuBackend : public ComputeBackend {
 public:
  CpuBackend(const ModelConfig& model, int stage, int num_stages, int microbatches)
      : model_(model),
        stage_(stage),
        last_(stage == num_stages - 1),
        m_(microbatches),
        mlp_(model, stage, num_stages) {}

  std::size_t message_floats() const override { return model_.activation_floats(); }

  void forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& out) override {
    std::vector<float> input;
    const std::vector<float>* x = &in;
    if (stage_ == 0 || last_) {
      input = synthetic_input(model_, iteration, mb);
      if (stage_ == 0) {
        x = &input;
      }
    }
    out.resize(message_floats());
    mlp_.forward(mb, x->data(), out.data());
    if (last_) {
      // The target needs the model's input, which the last stage regenerates from the seed.
      const std::vector<float> target = synthetic_target(model_, input);
      loss_sum_ += mse_loss(out, target, m_, grads_[mb]);
      ++losses_;
    }
  }

  void backward(int iteration, int mb, const std::vector<float>& grad_out, std::vector<float>& grad_in) override {
    backward_input(iteration, mb, grad_out, grad_in);
    backward_weight(iteration, mb);
  }
  void backward_input(int, int mb, const std::vector<float>& grad_out, std::vector<float>& grad_in) override {
    grad_in.resize(message_floats());
    const std::vector<float>& dy = last_ ? grads_.at(mb) : grad_out;
    mlp_.backward_input(mb, dy.data(), stage_ == 0 ? nullptr : grad_in.data());
    if (last_) {
      grads_.erase(mb);
    }
  }
  void backward_weight(int, int mb) override { mlp_.backward_weight(mb); }

  void step() override {
    mlp_.step();
    last_loss_ = losses_ > 0 ? loss_sum_ / losses_ : std::numeric_limits<double>::quiet_NaN();
    loss_sum_ = 0;
    losses_ = 0;
  }

  double loss() const override { return last_ ? last_loss_ : std::numeric_limits<double>::quiet_NaN(); }
  std::uint64_t held_bytes() const override { return mlp_.stash_bytes(); }
  const MlpStage& mlp() const { return mlp_; }

 private:
  ModelConfig model_;
  int stage_;
  bool last_;
  int m_;
  MlpStage mlp_;
  std::map<int, std::vector<float>> grads_;  // last stage: loss gradient per micro-batch
  double loss_sum_ = 0;
  int losses_ = 0;
  double last_loss_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace

std::unique_ptr<ComputeBackend> make_cpu_backend(const ModelConfig& model, int stage, int num_stages,
                                                 int microbatches) {
  openblas_set_num_threads(1);
  return std::make_unique<CpuBackend>(model, stage, num_stages, microbatches);
}

const MlpStage* cpu_stage(const ComputeBackend& backend) {
  const auto* cpu = dynamic_cast<const CpuBackend*>(&backend);
  return cpu == nullptr ? nullptr : &cpu->mlp();
}

std::pair<std::chrono::nanoseconds, std::chrono::nanoseconds> profile_cpu_backend(const ModelConfig& model, int stage,
                                                                                  int num_stages, int repeats) {
  auto backend = make_cpu_backend(model, stage, num_stages, repeats);
  std::vector<float> in(backend->message_floats(), 0.1f), out, grad(backend->message_floats(), 0.01f), grad_in;
  using Clock = std::chrono::steady_clock;
  Clock::duration fwd{}, bwd{};
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    backend->forward(0, i, in, out);
    const auto t1 = Clock::now();
    backend->backward(0, i, grad, grad_in);
    bwd += Clock::now() - t1;
    fwd += t1 - t0;
  }
  const auto n = std::max(repeats, 1);
  return {std::chrono::duration_cast<std::chrono::nanoseconds>(fwd) / n,
          std::chrono::duration_cast<std::chrono::nanoseconds>(bwd) / n};
}

}  // namespace contend::pipeline
