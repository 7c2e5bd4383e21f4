#pragma once
// The model a pipeline trains: a stack of residual MLP blocks, y = x + relu(x W1 + b1) W2 + b2,
// on synthetic data (inputs uniform in [-1, 1] from a fixed seed, targets tanh(x T) of a fixed
// teacher T), with a mean-squared-error loss at the last stage. Layer l's weights depend only on
// (seed, l), so any split over stages trains the same model as one process does.
// MlpStage holds one stage's layers. Not thread-safe: one compute thread per stage.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/result.h"

namespace contend::pipeline {

struct ModelConfig {
  int hidden = 64;                // h: width of the activations between blocks
  int ffn_mult = 4;               // inner width f = ffn_mult * h
  int layers = 8;                 // blocks over all stages
  int microbatch_size = 4;        // sequences per micro-batch
  int seq_len = 16;               // tokens per sequence
  std::uint64_t seed = 1234;      // weights, data and teacher
  std::string optimizer = "sgd";  // "sgd" or "adam"
  double lr = 0.05;               // learning rate
  std::vector<int> split;         // layers per stage; empty: as even as possible, earlier stages first

  int tokens() const { return microbatch_size * seq_len; }
  std::size_t activation_floats() const { return static_cast<std::size_t>(tokens()) * hidden; }
};

// The limits validate_model() enforces, so that no input allocates absurd memory.
inline constexpr int kMaxHidden = 65536;
inline constexpr int kMaxLayers = 65536;
inline constexpr int kMaxTokens = 1 << 20;                    // per micro-batch
inline constexpr std::uint64_t kMaxStageBytes = 64ull << 30;  // weights and optimizer state

// kInvalidArgument naming the field when sizes are not positive or over the limits above, the
// optimizer is unknown, `split` does not have one positive entry per stage summing to `layers`, or
// one stage would hold more than kMaxStageBytes.
Result<void> validate_model(const ModelConfig& config, int num_stages);
// Bytes of weights, gradients and Adam's moments of `layers` blocks.
std::uint64_t stage_state_bytes(const ModelConfig& config, int layers);
// The first layer and the layer count of `stage`. Requires validate_model() to pass.
std::pair<int, int> stage_layers(const ModelConfig& config, int stage, int num_stages);

// Deterministic synthetic data of micro-batch `mb` in `iteration`: input [tokens x h].
std::vector<float> synthetic_input(const ModelConfig& config, int iteration, int mb);
// Its target: tanh(input x teacher).
std::vector<float> synthetic_target(const ModelConfig& config, const std::vector<float>& input);

class MlpStage {
 public:
  MlpStage(const ModelConfig& config, int stage, int num_stages);

  // x, y: [tokens x h]. Stashes what backward needs for `mb` until backward(mb).
  void forward(int mb, const float* x, float* y);
  // dy: [tokens x h]; writes dx (may be nullptr on the first stage); accumulates weight gradients
  // in call order and frees the stash of `mb`. Requires forward(mb) first. Exactly
  // backward_input then backward_weight.
  void backward(int mb, const float* dy, float* dx);
  // The input gradient only (zero-bubble's I): writes dx and keeps each layer's output and inner
  // gradients for backward_weight, which accumulates the weight gradients (W) with the same
  // arithmetic as backward() and frees the micro-batch's stash.
  void backward_input(int mb, const float* dy, float* dx);
  void backward_weight(int mb);
  // Applies the optimizer to the accumulated gradients and zeroes them.
  void step();

  int num_layers() const { return static_cast<int>(layers_.size()); }
  // Parameters and gradients of local layer i, in order W1, b1, W2, b2 (for tests).
  std::vector<const std::vector<float>*> params(int i) const;
  std::vector<const std::vector<float>*> grads(int i) const;
  std::uint64_t stash_bytes() const { return stash_bytes_; }

 private:
  struct Layer {
    std::vector<float> w1, b1, w2, b2;      // [h x f], [f], [f x h], [h]
    std::vector<float> gw1, gb1, gw2, gb2;  // gradients
    std::vector<float> m, v;                // Adam moments, all parameters flattened
  };
  ModelConfig config_;
  std::vector<Layer> layers_;
  std::map<int, std::vector<float>> stash_;  // per micro-batch: per layer x [T x h] then a [T x f]
  std::map<int, std::vector<float>> grads_;  // between I and W: per layer dy [T x h] then da [T x f]
  std::vector<std::vector<float>> free_;     // stash buffers to reuse
  std::vector<float> scratch_a_, scratch_b_, scratch_c_;
  std::uint64_t stash_bytes_ = 0;
  int steps_ = 0;
};

// Loss of one micro-batch and its gradient: loss = 0.5 * mean((y - t)^2); dy = (y - t) / (n * m)
// with n = tokens x h and m micro-batches, so gradients average over the iteration.
double mse_loss(const std::vector<float>& y, const std::vector<float>& target, int microbatches,
                std::vector<float>& dy);

// The single-process reference of one iteration: every stage's layers run micro-batch by
// micro-batch in one thread, gradients accumulated in micro-batch order and not applied.
// Returns the stages and the mean loss.
std::pair<std::vector<MlpStage>, double> reference_iteration(const ModelConfig& model, int num_stages, int microbatches,
                                                             int iteration);

}  // namespace contend::pipeline
