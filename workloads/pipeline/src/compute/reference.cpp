// The single-process reference of one iteration, which every distributed run's gradients are
// checked against (tests/unit/workloads/pipeline/exec/worker_test.cpp, tests/gpu/).

#include "contend/pipeline/compute/model.h"

namespace contend::pipeline {

std::pair<std::vector<MlpStage>, double> reference_iteration(const ModelConfig& model, int num_stages, int microbatches,
                                                             int iteration) {
  std::vector<MlpStage> stages;
  for (int s = 0; s < num_stages; ++s) {
    stages.emplace_back(model, s, num_stages);
  }
  double loss = 0;
  std::vector<float> dy;
  for (int mb = 0; mb < microbatches; ++mb) {
    std::vector<float> x = synthetic_input(model, iteration, mb);
    const std::vector<float> target = synthetic_target(model, x);
    for (auto& stage : stages) {
      std::vector<float> y(x.size());
      stage.forward(mb, x.data(), y.data());
      x = std::move(y);
    }
    loss += mse_loss(x, target, microbatches, dy);
    for (int s = num_stages - 1; s >= 0; --s) {
      std::vector<float> dx(dy.size());
      stages[s].backward(mb, dy.data(), dx.data());
      dy = std::move(dx);
    }
  }
  return {std::move(stages), loss / microbatches};
}

}  // namespace contend::pipeline
