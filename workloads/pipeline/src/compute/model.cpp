#include "contend/pipeline/compute/model.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "contend/common/units.h"

namespace contend::pipeline {
namespace {

void fill_uniform(std::vector<float>& v, std::mt19937_64& rng, float scale) {
  for (float& x : v) {
    // Top 24 bits of the generator: the same floats with every standard library.
    x = scale * (static_cast<float>(rng() >> 40) / 8388608.0f - 1.0f);
  }
}

std::vector<float> teacher(const ModelConfig& c) {
  std::vector<float> t(static_cast<std::size_t>(c.hidden) * c.hidden);
  std::mt19937_64 rng(c.seed * 7919 + 17);
  fill_uniform(t, rng, 2.0f / std::sqrt(static_cast<float>(c.hidden)));
  return t;
}

}  // namespace

namespace {

// Refuses a model whose largest stage would hold more than kMaxStageBytes of state, before any of
// it is allocated (a typo like hidden 2000000000 must not run the machine out of memory).
Result<void> check_stage_bytes(const ModelConfig& c, int num_stages) {
  int most_layers = 0;
  for (int s = 0; s < num_stages; ++s) {
    most_layers = std::max(most_layers, c.split.empty() ? (c.layers + num_stages - 1) / num_stages : c.split[s]);
  }
  const std::uint64_t bytes = stage_state_bytes(c, most_layers);
  if (bytes > kMaxStageBytes) {
    return make_error(Errc::kInvalidArgument,
                      "model: " + format_size(bytes) + " of weights, gradients and optimizer state on one stage (" +
                          std::to_string(most_layers) + " layers of hidden " + std::to_string(c.hidden) +
                          "), more than the " + format_size(kMaxStageBytes) + " contend allows per stage");
  }
  return {};
}

}  // namespace

Result<void> validate_model(const ModelConfig& c, int num_stages) {
  for (auto [name, value, most] :
       {std::tuple{"hidden", c.hidden, kMaxHidden}, std::tuple{"ffn_mult", c.ffn_mult, 64},
        std::tuple{"layers", c.layers, kMaxLayers}, std::tuple{"microbatch_size", c.microbatch_size, kMaxTokens},
        std::tuple{"seq_len", c.seq_len, kMaxTokens}}) {
    if (value < 1 || value > most) {
      return make_error(Errc::kInvalidArgument, std::string("model ") + name + " must be 1 to " + std::to_string(most) +
                                                    ", got " + std::to_string(value));
    }
  }
  const long long tokens = static_cast<long long>(c.microbatch_size) * c.seq_len;
  if (tokens > kMaxTokens) {
    return make_error(Errc::kInvalidArgument, "model: " + std::to_string(tokens) +
                                                  " tokens per micro-batch (microbatch_size x seq_len), more than " +
                                                  std::to_string(kMaxTokens));
  }
  if (c.optimizer != "sgd" && c.optimizer != "adam") {
    return make_error(Errc::kInvalidArgument, "optimizer must be sgd or adam, got \"" + c.optimizer + "\"");
  }
  if (c.split.empty()) {
    if (c.layers < num_stages) {
      return make_error(Errc::kInvalidArgument, "model of " + std::to_string(c.layers) + " layers cannot fill " +
                                                    std::to_string(num_stages) + " stages");
    }
    return check_stage_bytes(c, num_stages);
  }
  if (static_cast<int>(c.split.size()) != num_stages) {
    return make_error(Errc::kInvalidArgument, "split has " + std::to_string(c.split.size()) + " entries for " +
                                                  std::to_string(num_stages) + " stages");
  }
  int sum = 0;
  for (int n : c.split) {
    if (n < 1) {
      return make_error(Errc::kInvalidArgument, "every stage needs at least one layer in split");
    }
    sum += n;
  }
  if (sum != c.layers) {
    return make_error(Errc::kInvalidArgument,
                      "split sums to " + std::to_string(sum) + " layers, the model has " + std::to_string(c.layers));
  }
  return check_stage_bytes(c, num_stages);
}

std::uint64_t stage_state_bytes(const ModelConfig& c, int layers) {
  const std::uint64_t h = static_cast<std::uint64_t>(c.hidden);
  const std::uint64_t f = h * static_cast<std::uint64_t>(c.ffn_mult);
  // Weights, gradients and Adam's two moments of W1, b1, W2, b2, in fp32.
  return 4 * 4 * (2 * h * f + h + f) * static_cast<std::uint64_t>(layers);
}

std::pair<int, int> stage_layers(const ModelConfig& c, int stage, int num_stages) {
  if (!c.split.empty()) {
    int first = 0;
    for (int s = 0; s < stage; ++s) {
      first += c.split[s];
    }
    return {first, c.split[stage]};
  }
  const int base = c.layers / num_stages;
  const int extra = c.layers % num_stages;
  const int first = stage * base + std::min(stage, extra);
  return {first, base + (stage < extra ? 1 : 0)};
}

std::vector<float> synthetic_input(const ModelConfig& c, int iteration, int mb) {
  std::vector<float> x(c.activation_floats());
  std::mt19937_64 rng(c.seed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(iteration + 1)) ^
                      (0xC2B2AE3D27D4EB4Full * static_cast<std::uint64_t>(mb + 1)));
  fill_uniform(x, rng, 1.0f);
  return x;
}

std::vector<float> synthetic_target(const ModelConfig& c, const std::vector<float>& input) {
  const std::vector<float> t = teacher(c);
  std::vector<float> out(input.size());
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c.tokens(), c.hidden, c.hidden, 1.0f, input.data(), c.hidden,
              t.data(), c.hidden, 0.0f, out.data(), c.hidden);
  for (float& v : out) {
    v = std::tanh(v);
  }
  return out;
}

double mse_loss(const std::vector<float>& y, const std::vector<float>& target, int microbatches,
                std::vector<float>& dy) {
  CONTEND_CHECK(y.size() == target.size(), "mse_loss: size mismatch");
  dy.resize(y.size());
  double sum = 0;
  const double n = static_cast<double>(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double d = static_cast<double>(y[i]) - target[i];
    sum += d * d;
    dy[i] = static_cast<float>(d / (n * microbatches));
  }
  return 0.5 * sum / n;
}

MlpStage::MlpStage(const ModelConfig& config, int stage, int num_stages) : config_(config) {
  const auto [first, count] = stage_layers(config, stage, num_stages);
  const std::size_t h = static_cast<std::size_t>(config.hidden);
  const std::size_t f = h * static_cast<std::size_t>(config.ffn_mult);
  for (int l = first; l < first + count; ++l) {
    Layer L;
    std::mt19937_64 rng(config.seed * 1000003ull + static_cast<std::uint64_t>(l));
    L.w1.resize(h * f);
    L.b1.assign(f, 0.0f);
    L.w2.resize(f * h);
    L.b2.assign(h, 0.0f);
    fill_uniform(L.w1, rng, 1.0f / std::sqrt(static_cast<float>(h)));
    fill_uniform(L.w2, rng, 0.5f / std::sqrt(static_cast<float>(f)));
    L.gw1.assign(L.w1.size(), 0.0f);
    L.gb1.assign(f, 0.0f);
    L.gw2.assign(L.w2.size(), 0.0f);
    L.gb2.assign(h, 0.0f);
    layers_.push_back(std::move(L));
  }
}

void MlpStage::forward(int mb, const float* x, float* y) {
  const int T = config_.tokens();
  const int h = config_.hidden;
  const int f = h * config_.ffn_mult;
  const std::size_t per_layer = static_cast<std::size_t>(T) * (h + f);
  std::vector<float> stash;
  if (!free_.empty()) {
    stash = std::move(free_.back());
    free_.pop_back();
  }
  stash.resize(per_layer * layers_.size());
  scratch_a_.assign(x, x + static_cast<std::size_t>(T) * h);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    float* xs = stash.data() + l * per_layer;
    float* as = xs + static_cast<std::size_t>(T) * h;
    std::copy(scratch_a_.begin(), scratch_a_.end(), xs);
    for (int t = 0; t < T; ++t) {
      std::copy(L.b1.begin(), L.b1.end(), as + static_cast<std::size_t>(t) * f);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, f, h, 1.0f, xs, h, L.w1.data(), f, 1.0f, as, f);
    scratch_b_.resize(static_cast<std::size_t>(T) * f);
    for (std::size_t i = 0; i < scratch_b_.size(); ++i) {
      scratch_b_[i] = std::max(as[i], 0.0f);
    }
    // y = x + b2 + relu(a) W2
    for (int t = 0; t < T; ++t) {
      for (int j = 0; j < h; ++j) {
        scratch_a_[static_cast<std::size_t>(t) * h + j] += L.b2[j];
      }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, h, f, 1.0f, scratch_b_.data(), f, L.w2.data(), h, 1.0f,
                scratch_a_.data(), h);
  }
  std::copy(scratch_a_.begin(), scratch_a_.end(), y);
  stash_bytes_ += stash.size() * sizeof(float);
  stash_[mb] = std::move(stash);
}

void MlpStage::backward_input(int mb, const float* dy, float* dx) {
  auto it = stash_.find(mb);
  CONTEND_CHECK(it != stash_.end() && grads_.count(mb) == 0,
                "backward of micro-batch " + std::to_string(mb) + " without its forward, or twice");
  const int T = config_.tokens();
  const int h = config_.hidden;
  const int f = h * config_.ffn_mult;
  const std::size_t per_layer = static_cast<std::size_t>(T) * (h + f);
  const std::vector<float>& stash = it->second;
  // What the weight gradients need: per layer, the gradient at its output and at its inner
  // pre-activation, laid out as the stash is.
  std::vector<float> kept;
  if (!free_.empty()) {
    kept = std::move(free_.back());
    free_.pop_back();
  }
  kept.resize(per_layer * layers_.size());
  scratch_a_.assign(dy, dy + static_cast<std::size_t>(T) * h);  // gradient flowing down
  for (std::size_t li = layers_.size(); li-- > 0;) {
    const Layer& L = layers_[li];
    const float* as = stash.data() + li * per_layer + static_cast<std::size_t>(T) * h;
    float* dys = kept.data() + li * per_layer;
    float* das = dys + static_cast<std::size_t>(T) * h;
    std::copy(scratch_a_.begin(), scratch_a_.end(), dys);
    // da = (dy W2^T) * (a > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, f, h, 1.0f, scratch_a_.data(), h, L.w2.data(), h, 0.0f, das,
                f);
    for (std::size_t i = 0; i < static_cast<std::size_t>(T) * f; ++i) {
      if (as[i] <= 0.0f) {
        das[i] = 0.0f;
      }
    }
    // dx = dy + da W1^T (residual)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, h, f, 1.0f, das, f, L.w1.data(), f, 1.0f, scratch_a_.data(),
                h);
  }
  if (dx != nullptr) {
    std::copy(scratch_a_.begin(), scratch_a_.end(), dx);
  }
  stash_bytes_ += kept.size() * sizeof(float);
  grads_[mb] = std::move(kept);
}

void MlpStage::backward_weight(int mb) {
  auto it = stash_.find(mb);
  auto kept = grads_.find(mb);
  CONTEND_CHECK(it != stash_.end() && kept != grads_.end(),
                "weight gradient of micro-batch " + std::to_string(mb) + " without its input gradient");
  const int T = config_.tokens();
  const int h = config_.hidden;
  const int f = h * config_.ffn_mult;
  const std::size_t per_layer = static_cast<std::size_t>(T) * (h + f);
  for (std::size_t li = layers_.size(); li-- > 0;) {
    Layer& L = layers_[li];
    const float* xs = it->second.data() + li * per_layer;
    const float* as = xs + static_cast<std::size_t>(T) * h;
    const float* dys = kept->second.data() + li * per_layer;
    const float* das = dys + static_cast<std::size_t>(T) * h;
    scratch_b_.resize(static_cast<std::size_t>(T) * f);
    for (std::size_t i = 0; i < scratch_b_.size(); ++i) {
      scratch_b_[i] = std::max(as[i], 0.0f);  // r = relu(a)
    }
    // dW2 += r^T dy ; db2 += sum dy ; dW1 += x^T da ; db1 += sum da
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, f, h, T, 1.0f, scratch_b_.data(), f, dys, h, 1.0f,
                L.gw2.data(), h);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, f, T, 1.0f, xs, h, das, f, 1.0f, L.gw1.data(), f);
    for (int t = 0; t < T; ++t) {
      for (int j = 0; j < h; ++j) {
        L.gb2[j] += dys[static_cast<std::size_t>(t) * h + j];
      }
      for (int j = 0; j < f; ++j) {
        L.gb1[j] += das[static_cast<std::size_t>(t) * f + j];
      }
    }
  }
  for (auto* done : {&it->second, &kept->second}) {
    stash_bytes_ -= done->size() * sizeof(float);
    free_.push_back(std::move(*done));
  }
  stash_.erase(it);
  grads_.erase(kept);
}

void MlpStage::backward(int mb, const float* dy, float* dx) {
  backward_input(mb, dy, dx);
  backward_weight(mb);
}

void MlpStage::step() {
  ++steps_;
  const float lr = static_cast<float>(config_.lr);
  for (Layer& L : layers_) {
    std::vector<float>* ps[] = {&L.w1, &L.b1, &L.w2, &L.b2};
    std::vector<float>* gs[] = {&L.gw1, &L.gb1, &L.gw2, &L.gb2};
    if (config_.optimizer == "adam") {
      std::size_t total = 0;
      for (auto* p : ps) {
        total += p->size();
      }
      L.m.resize(total, 0.0f);
      L.v.resize(total, 0.0f);
      constexpr float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
      const float c1 = 1.0f - std::pow(b1, static_cast<float>(steps_));
      const float c2 = 1.0f - std::pow(b2, static_cast<float>(steps_));
      std::size_t k = 0;
      for (int j = 0; j < 4; ++j) {
        for (std::size_t i = 0; i < ps[j]->size(); ++i, ++k) {
          const float g = (*gs[j])[i];
          L.m[k] = b1 * L.m[k] + (1 - b1) * g;
          L.v[k] = b2 * L.v[k] + (1 - b2) * g * g;
          (*ps[j])[i] -= lr * (L.m[k] / c1) / (std::sqrt(L.v[k] / c2) + eps);
        }
      }
    } else {
      for (int j = 0; j < 4; ++j) {
        for (std::size_t i = 0; i < ps[j]->size(); ++i) {
          (*ps[j])[i] -= lr * (*gs[j])[i];
        }
      }
    }
    for (auto* g : gs) {
      std::fill(g->begin(), g->end(), 0.0f);
    }
  }
}

std::vector<const std::vector<float>*> MlpStage::params(int i) const {
  const Layer& L = layers_[i];
  return {&L.w1, &L.b1, &L.w2, &L.b2};
}

std::vector<const std::vector<float>*> MlpStage::grads(int i) const {
  const Layer& L = layers_[i];
  return {&L.gw1, &L.gb1, &L.gw2, &L.gb2};
}

}  // namespace contend::pipeline
