#include "contend/pipeline_cuda/cuda_backend.h"
#include "contend/pipeline_cuda/entries.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "cuda_stage.h"
#include "kernels.cuh"

namespace contend::pipeline_cuda {
namespace detail {

// `out` and `grad_in` are filled in by the completions (take_completion), not here.
void CudaBackend::forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& /*out*/) {
  use_device();
  std::vector<float> input;
  const std::vector<float>* x = &in;
  if (stage_ == 0 || last_) {
    input = pipeline::synthetic_input(model_, iteration, mb);
    if (stage_ == 0) {
      x = &input;
    }
  }
  copy_in(in_, *x);
  CUDA_CHECK(cudaMemcpyAsync(cur_, in_, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
  input_consumed();
  CONTEND_CHECK(!free_slots_.empty(), "cuda: more micro-batches in flight than the arena holds");
  float* slot = free_slots_.back();
  free_slots_.pop_back();
  slots_[mb] = slot;
  for (int l = 0; l < layers_; ++l) {
    const Weights w = weights(params_, l);
    float* xs = slot + static_cast<std::size_t>(l) * (th_ + tf_);
    float* as = xs + th_;
    CUDA_CHECK(cudaMemcpyAsync(xs, cur_, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
    CUDA_CHECK(kernels::broadcast_rows(as, w.b1, T(), F(), compute_stream_));
    gemm(CUBLAS_OP_N, CUBLAS_OP_N, T_, f_, h_, xs, h_, w.w1, f_, 1.0f, as, f_);
    CUDA_CHECK(kernels::relu(relu_, as, tf_, compute_stream_));
    CUDA_CHECK(kernels::add_rows(cur_, w.b2, T(), H(), compute_stream_));
    gemm(CUBLAS_OP_N, CUBLAS_OP_N, T_, h_, f_, relu_, f_, w.w2, h_, 1.0f, cur_, h_);
  }
  if (last_) {
    copy_in(target_, pipeline::synthetic_target(model_, input));
    float* dy = slot + static_cast<std::size_t>(layers_) * (th_ + tf_);
    CUDA_CHECK(kernels::mse(dy, cur_, target_, th_, m_, loss_, compute_stream_));
    input_consumed();
    ++losses_;
  } else {
    copy_out(cur_);
  }
  held_ += stash_bytes();
}

void CudaBackend::backward(int, int mb, const std::vector<float>& grad_out, std::vector<float>& /*grad_in*/) {
  use_device();
  auto it = slots_.find(mb);
  CONTEND_CHECK(it != slots_.end(), "cuda: backward of micro-batch " + std::to_string(mb) + " without its forward");
  float* slot = it->second;
  if (last_) {
    const float* dy = slot + static_cast<std::size_t>(layers_) * (th_ + tf_);
    CUDA_CHECK(cudaMemcpyAsync(grad_, dy, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
  } else {
    copy_in(in_, grad_out);
    CUDA_CHECK(cudaMemcpyAsync(grad_, in_, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
    input_consumed();
  }
  for (int l = layers_ - 1; l >= 0; --l) {
    const Weights w = weights(params_, l);
    const Weights g = weights(grads_, l);
    const float* xs = slot + static_cast<std::size_t>(l) * (th_ + tf_);
    const float* as = xs + th_;
    CUDA_CHECK(kernels::relu(relu_, as, tf_, compute_stream_));
    gemm(CUBLAS_OP_T, CUBLAS_OP_N, f_, h_, T_, relu_, f_, grad_, h_, 1.0f, g.w2, h_);  // dW2 += r^T dy
    CUDA_CHECK(kernels::column_sums(g.b2, grad_, T(), H(), compute_stream_));
    gemm(CUBLAS_OP_N, CUBLAS_OP_T, T_, f_, h_, grad_, h_, w.w2, h_, 0.0f, dact_, f_);  // da = dy W2^T
    CUDA_CHECK(kernels::relu_grad(dact_, as, tf_, compute_stream_));
    gemm(CUBLAS_OP_T, CUBLAS_OP_N, h_, f_, T_, xs, h_, dact_, f_, 1.0f, g.w1, f_);  // dW1 += x^T da
    CUDA_CHECK(kernels::column_sums(g.b1, dact_, T(), F(), compute_stream_));
    gemm(CUBLAS_OP_N, CUBLAS_OP_T, T_, h_, f_, dact_, f_, w.w1, f_, 1.0f, grad_, h_);  // dx = dy + da W1^T
  }
  if (stage_ > 0) {
    copy_out(grad_);
  }
  free_slots_.push_back(slot);
  slots_.erase(it);
  held_ -= stash_bytes();
}

void CudaBackend::step() {
  use_device();
  ++steps_;
  const float lr = static_cast<float>(model_.lr);
  const std::size_t n = layout_.parameters;  // past INT_MAX at hidden 8192 with 4 layers
  if (model_.optimizer == "adam") {
    const float c1 = 1.0f - std::pow(0.9f, static_cast<float>(steps_));
    const float c2 = 1.0f - std::pow(0.999f, static_cast<float>(steps_));
    CUDA_CHECK(kernels::adam(params_, grads_, adam_m_, adam_v_, lr, c1, c2, n, compute_stream_));
  } else {
    CUDA_CHECK(kernels::sgd(params_, grads_, lr, n, compute_stream_));
  }
  if (last_) {
    double sum = 0;
    CUDA_CHECK(cudaMemcpyAsync(&sum, loss_, sizeof sum, cudaMemcpyDeviceToHost, compute_stream_));
    CUDA_CHECK(cudaMemsetAsync(loss_, 0, sizeof(double), compute_stream_));
    CUDA_CHECK(cudaStreamSynchronize(compute_stream_));
    last_loss_ = losses_ > 0 ? sum / losses_ : std::numeric_limits<double>::quiet_NaN();
    losses_ = 0;
  } else {
    CUDA_CHECK(cudaStreamSynchronize(compute_stream_));
  }
}

std::vector<std::vector<float>> CudaBackend::layer(const float* base, int l) const {
  use_device();  // the caller's thread (a test's) may never have touched this device
  std::vector<float> all(layout_.params_per_layer);
  CUDA_CHECK(cudaStreamSynchronize(compute_stream_));
  CUDA_CHECK(cudaMemcpy(all.data(), base + static_cast<std::size_t>(l) * layout_.params_per_layer,
                        all.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const std::size_t hf = static_cast<std::size_t>(h_) * static_cast<std::size_t>(f_);
  const std::size_t sizes[] = {hf, static_cast<std::size_t>(f_), hf, static_cast<std::size_t>(h_)};
  std::vector<std::vector<float>> out;
  std::size_t k = 0;
  for (std::size_t n : sizes) {
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(k), all.begin() + static_cast<std::ptrdiff_t>(k + n));
    k += n;
  }
  return out;
}

}  // namespace detail

namespace {

using detail::CudaBackend;
using pipeline::ComputeBackend;
using pipeline::ModelConfig;

Result<cublasComputeType_t> compute_type(const std::string& math) {
  if (math == "fp32") {
    return CUBLAS_COMPUTE_32F;
  }
  if (math == "tf32") {
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  }
  if (math == "bf16") {
    return CUBLAS_COMPUTE_32F_FAST_16BF;
  }
  return make_error(Errc::kInvalidArgument, "cuda math must be fp32, tf32 or bf16, got \"" + math + "\"");
}

}  // namespace

Result<std::unique_ptr<ComputeBackend>> make_cuda_backend(const ModelConfig& model, int stage, int num_stages,
                                                          int microbatches, const CudaOptions& options) {
  auto compute = compute_type(options.math);
  if (!compute) {
    return compute.error();
  }
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    return make_error(Errc::kUnsupported,
                      std::string("no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "none visible"));
  }
  const int device = options.device >= 0 ? options.device : stage % count;
  if (device >= count) {
    return make_error(Errc::kInvalidArgument,
                      "CUDA device " + std::to_string(device) + " of " + std::to_string(count) + " visible");
  }
  auto backend = std::make_unique<CudaBackend>(model, stage, num_stages, microbatches, *compute);
  if (auto ok = backend->init(device); !ok) {
    return ok.error();
  }
  return std::unique_ptr<ComputeBackend>(std::move(backend));
}

std::vector<std::vector<float>> cuda_params(const ComputeBackend& backend, int layer) {
  const auto* c = dynamic_cast<const CudaBackend*>(&backend);
  return c == nullptr ? std::vector<std::vector<float>>{} : c->layer(c->params(), layer);
}

std::vector<std::vector<float>> cuda_grads(const ComputeBackend& backend, int layer) {
  const auto* c = dynamic_cast<const CudaBackend*>(&backend);
  return c == nullptr ? std::vector<std::vector<float>>{} : c->layer(c->grads(), layer);
}

std::uint64_t cuda_arena_bytes(const ComputeBackend& backend) {
  const auto* c = dynamic_cast<const CudaBackend*>(&backend);
  return c == nullptr ? 0 : c->arena_bytes();
}

Result<std::unique_ptr<ComputeBackend>> make_cuda_backend(const Spec& spec, const pipeline::BackendContext& c,
                                                          int rank) {
  CudaOptions o;
  o.math = spec.text("math");
  return make_cuda_backend(c.model, rank, c.num_stages, c.microbatches, o);
}

Result<void> cuda_device_available() {
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    return make_error(Errc::kUnsupported, std::string("the cuda backend needs a CUDA device: ") +
                                              (e != cudaSuccess ? cudaGetErrorString(e) : "none visible"));
  }
  return {};
}

void register_cuda_backend() {
  pipeline::backends().add(cuda_backend_entry(),
                           pipeline::BackendKind{.uses_model = true,
                                                 .needs_device = true,
                                                 .make = [](const Spec& spec, const pipeline::BackendContext& c,
                                                            int rank) { return make_cuda_backend(spec, c, rank); },
                                                 .available = cuda_device_available});
}

}  // namespace contend::pipeline_cuda
