#include "contend/pipeline_cuda/cuda_backend.h"
#include "contend/pipeline_cuda/entries.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "contend/pipeline_cuda/arena_layout.h"
#include "cuda_check.h"
#include "kernels.cuh"

namespace contend::pipeline_cuda {
namespace {

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

class CudaBackend : public ComputeBackend {
 public:
  CudaBackend(const ModelConfig& model, int stage, int num_stages, int microbatches, cublasComputeType_t compute)
      : model_(model),
        stage_(stage),
        last_(stage == num_stages - 1),
        m_(microbatches),
        compute_(compute),
        reference_(model, stage, num_stages) {
    T_ = model.tokens();
    h_ = model.hidden;
    f_ = h_ * model.ffn_mult;
    layers_ = reference_.num_layers();
    th_ = static_cast<std::size_t>(T_) * static_cast<std::size_t>(h_);
    tf_ = static_cast<std::size_t>(T_) * static_cast<std::size_t>(f_);
  }

  ~CudaBackend() override {
    // Completions still queued in a transport hold slots: the transport is destroyed first
    // (worker.cpp), which runs or drops them. An untaken one goes now, while its event exists.
    pending_ = nullptr;
    // The thread destroying the backend may not be the one that made it: the current device is
    // per thread, and streams and handles are destroyed on their own device.
    if (cudaSetDevice(device_) != cudaSuccess) {
      std::fprintf(stderr, "contend cuda: cudaSetDevice(%d) failed while freeing a stage\n", device_);
    }
    if (compute_stream_ != nullptr) {
      cudaStreamSynchronize(compute_stream_);  // nothing may still write into what is freed below
    }
    for (cudaEvent_t e : slot_events_) {
      cudaEventDestroy(e);
    }
    if (pinned_ != nullptr) {
      cudaFreeHost(pinned_);
    }
    if (arena_ != nullptr) {
      cudaFree(arena_);
    }
    if (blas_ != nullptr) {
      cublasDestroy(blas_);
    }
    for (cudaStream_t s : {compute_stream_, h2d_, d2h_}) {
      if (s != nullptr) {
        cudaStreamDestroy(s);
      }
    }
    for (cudaEvent_t e : {copied_in_, consumed_in_}) {
      if (e != nullptr) {
        cudaEventDestroy(e);
      }
    }
  }

  // Outputs in flight to the transport: a whole iteration's activations and gradients.
  std::size_t out_slots() const { return 2 * static_cast<std::size_t>(m_); }

  // Everything the stage will ever use, in one device allocation and one pinned one, carved as
  // plan_arena lays it out (256-byte aligned). The zeroing and the initial weights go on the
  // compute stream, which is synchronized before returning: the other streams are non-blocking,
  // so work on the legacy stream would not be ordered before theirs.
  Result<void> init(int device) {
    device_ = device;
    if (auto e = cudaSetDevice(device); e != cudaSuccess) {
      return make_error(Errc::kUnsupported,
                        std::string("cudaSetDevice(") + std::to_string(device) + "): " + cudaGetErrorString(e));
    }
    StageShape shape;
    shape.tokens = static_cast<std::size_t>(T_);
    shape.hidden = static_cast<std::size_t>(h_);
    shape.ffn = static_cast<std::size_t>(f_);
    shape.layers = static_cast<std::size_t>(layers_);
    shape.microbatches = static_cast<std::size_t>(m_);
    shape.last = last_;
    auto plan = plan_arena(shape);
    if (!plan) {
      return plan.error();
    }
    layout_ = std::move(*plan);
    CUDA_TRY(cudaStreamCreateWithFlags(&compute_stream_, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking));
    CUDA_TRY(cudaEventCreateWithFlags(&copied_in_, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&consumed_in_, cudaEventDisableTiming));
    const std::size_t bytes = layout_.arena_bytes;
    if (auto e = cudaMalloc(&arena_, bytes); e != cudaSuccess) {
      return make_error(Errc::kIo,
                        "cudaMalloc(" + std::to_string(bytes) + " bytes, the stage's arena): " + cudaGetErrorString(e));
    }
    CUDA_TRY(cudaMemsetAsync(arena_, 0, bytes, compute_stream_));
    // Pinned host memory: the input's staging buffer and one buffer per output slot, so copies
    // both ways are DMA that runs beside the compute stream.
    if (auto e = cudaMallocHost(&pinned_, layout_.pinned_bytes); e != cudaSuccess) {
      return make_error(Errc::kIo, "cudaMallocHost(" + std::to_string(layout_.pinned_bytes) +
                                       " bytes, the stage's pinned buffers): " + cudaGetErrorString(e));
    }
    for (std::size_t j = 0; j < out_slots(); ++j) {
      cudaEvent_t e = nullptr;
      CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync));
      slot_events_.push_back(e);
      free_out_.push_back(j);
    }
    CUDA_TRY(cublasCreate(&blas_));
    CUDA_TRY(cublasSetStream(blas_, compute_stream_));
    params_ = device_floats(layout_.params);
    grads_ = device_floats(layout_.grads);
    adam_m_ = device_floats(layout_.adam_m);
    adam_v_ = device_floats(layout_.adam_v);
    for (const Span& slot : layout_.stash) {
      free_slots_.push_back(device_floats(slot));
    }
    in_ = device_floats(layout_.in);
    cur_ = device_floats(layout_.cur);
    grad_ = device_floats(layout_.grad);
    target_ = device_floats(layout_.target);
    relu_ = device_floats(layout_.relu);
    dact_ = device_floats(layout_.dact);
    loss_ = reinterpret_cast<double*>(static_cast<char*>(arena_) + layout_.loss.offset);
    in_staging_ = host_floats(layout_.pinned_in);
    for (std::size_t j = 0; j < out_slots(); ++j) {
      dev_out_.push_back(device_floats(layout_.out[j]));
      host_out_.push_back(host_floats(layout_.pinned_out[j]));
    }
    // The same initial weights as the cpu backend (MlpStage), so runs compare exactly.
    std::vector<float> host(layout_.parameters);
    for (int l = 0; l < layers_; ++l) {
      std::size_t k = static_cast<std::size_t>(l) * layout_.params_per_layer;
      for (const std::vector<float>* p : reference_.params(l)) {
        std::copy(p->begin(), p->end(), host.begin() + static_cast<std::ptrdiff_t>(k));
        k += p->size();
      }
    }
    CUDA_TRY(
        cudaMemcpyAsync(params_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, compute_stream_));
    CUDA_TRY(cudaStreamSynchronize(compute_stream_));  // `host` goes out of scope; the other streams start clean
    return {};
  }

  std::size_t message_floats() const override { return model_.activation_floats(); }

  // `out` and `grad_in` are filled in by the completions (take_completion), not here.
  void forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& /*out*/) override {
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

  void backward(int, int mb, const std::vector<float>& grad_out, std::vector<float>& /*grad_in*/) override {
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

  void step() override {
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

  double loss() const override { return last_ ? last_loss_ : std::numeric_limits<double>::quiet_NaN(); }
  pipeline::Completion take_completion() override { return std::exchange(pending_, {}); }
  std::uint64_t held_bytes() const override { return held_; }

  // Layer l of `base` (parameters or gradients) on the host, in the cpu backend's order.
  std::vector<std::vector<float>> layer(const float* base, int l) const {
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
  const float* params() const { return params_; }
  const float* grads() const { return grads_; }
  std::uint64_t arena_bytes() const { return layout_.arena_bytes; }

 private:
  // Layer l's W1 [h x f], b1 [f], W2 [f x h], b2 [h] inside `base` (parameters or gradients).
  struct Weights {
    float *w1, *b1, *w2, *b2;
  };
  Weights weights(float* base, int l) const {
    const std::size_t hf = static_cast<std::size_t>(h_) * static_cast<std::size_t>(f_);
    Weights w{};
    w.w1 = base + static_cast<std::size_t>(l) * layout_.params_per_layer;
    w.b1 = w.w1 + hf;
    w.w2 = w.b1 + f_;
    w.b2 = w.w2 + hf;
    return w;
  }
  // The current device is per thread: the compute thread, a test's thread, the transport's.
  void use_device() const { CUDA_CHECK(cudaSetDevice(device_)); }
  std::size_t T() const { return static_cast<std::size_t>(T_); }
  std::size_t H() const { return static_cast<std::size_t>(h_); }
  std::size_t F() const { return static_cast<std::size_t>(f_); }
  std::uint64_t stash_bytes() const { return static_cast<std::uint64_t>(layers_) * (th_ + tf_) * sizeof(float); }
  float* device_floats(const Span& s) { return reinterpret_cast<float*>(static_cast<char*>(arena_) + s.offset); }
  float* host_floats(const Span& s) { return reinterpret_cast<float*>(static_cast<char*>(pinned_) + s.offset); }

  std::size_t bytes_th() const { return th_ * sizeof(float); }

  // Host to device through the pinned staging buffer on the copy stream, after the compute stream
  // is done with the previous input; the compute stream waits for the copy. The host does not wait
  // for the device: the staging buffer is reused only once the previous copy finished.
  void copy_in(float* dst, const std::vector<float>& src) {
    CONTEND_CHECK(src.size() * sizeof(float) == bytes_th(), "cuda: an input of the wrong size");
    CUDA_CHECK(cudaEventSynchronize(copied_in_));
    std::memcpy(in_staging_, src.data(), bytes_th());
    CUDA_CHECK(cudaStreamWaitEvent(h2d_, consumed_in_, 0));
    CUDA_CHECK(cudaMemcpyAsync(dst, in_staging_, bytes_th(), cudaMemcpyHostToDevice, h2d_));
    CUDA_CHECK(cudaEventRecord(copied_in_, h2d_));
    CUDA_CHECK(cudaStreamWaitEvent(compute_stream_, copied_in_, 0));
  }
  // The compute stream is done reading the input buffer (it was copied on).
  void input_consumed() { CUDA_CHECK(cudaEventRecord(consumed_in_, compute_stream_)); }

  // `src` copied into an output slot on the compute stream (so the next action may overwrite it)
  // and from there to pinned memory on the other copy stream, while the next action computes.
  // The output tensor is filled in by the completion (take_completion), which the transport runs
  // on its sending thread: it waits for the copy and releases the slot, also when dropped unrun.
  void copy_out(const float* src) {
    const std::size_t j = acquire_out_slot();
    CUDA_CHECK(cudaMemcpyAsync(dev_out_[j], src, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
    CUDA_CHECK(cudaEventRecord(slot_events_[j], compute_stream_));
    CUDA_CHECK(cudaStreamWaitEvent(d2h_, slot_events_[j], 0));
    CUDA_CHECK(cudaMemcpyAsync(host_out_[j], dev_out_[j], bytes_th(), cudaMemcpyDeviceToHost, d2h_));
    CUDA_CHECK(cudaEventRecord(slot_events_[j], d2h_));
    struct Slot {
      CudaBackend* self;
      std::size_t j;
      ~Slot() { self->release_out_slot(j); }
    };
    std::shared_ptr<Slot> slot(new Slot{this, j});
    pending_ = [slot, floats = message_floats()](std::vector<float>& out) {
      CudaBackend* self = slot->self;
      CUDA_CHECK(cudaSetDevice(self->device_));  // the transport's thread
      CUDA_CHECK(cudaEventSynchronize(self->slot_events_[slot->j]));
      out.resize(floats);
      std::memcpy(out.data(), self->host_out_[slot->j], floats * sizeof(float));
    };
  }

  std::size_t acquire_out_slot() {
    std::unique_lock<std::mutex> lock(out_mutex_);
    out_cv_.wait(lock, [&] { return !free_out_.empty(); });  // the transport is behind by a whole iteration
    const std::size_t j = free_out_.back();
    free_out_.pop_back();
    return j;
  }
  // Runs on whichever thread drops the completion (the transport's, or this one's): on this device.
  void release_out_slot(std::size_t j) {
    if (cudaSetDevice(device_) != cudaSuccess || cudaEventSynchronize(slot_events_[j]) != cudaSuccess) {
      std::fprintf(stderr, "contend cuda: an output copy failed\n");
    }
    std::lock_guard<std::mutex> lock(out_mutex_);
    free_out_.push_back(j);
    out_cv_.notify_all();
  }

  // Row-major C = alpha op(A) op(B) + beta C, as cblas_sgemm(CblasRowMajor, ...) takes it: cuBLAS
  // is column-major, so it computes C^T = op(B)^T op(A)^T with the operands swapped.
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int M, int N, int K, const float* A, int lda, const float* B,
            int ldb, float beta, float* C, int ldc) {
    const float alpha = 1.0f;
    CUDA_CHECK(cublasGemmEx(blas_, tb, ta, N, M, K, &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &beta, C,
                            CUDA_R_32F, ldc, compute_, CUBLAS_GEMM_DEFAULT));
  }

  ModelConfig model_;
  int stage_;
  bool last_;
  int m_;
  cublasComputeType_t compute_;
  pipeline::MlpStage reference_;            // the initial weights
  int T_ = 0, h_ = 0, f_ = 0, layers_ = 0;  // cuBLAS takes int dimensions; products are size_t
  std::size_t th_ = 0, tf_ = 0;             // T x h, T x f
  ArenaLayout layout_;
  void* arena_ = nullptr;
  float *params_ = nullptr, *grads_ = nullptr, *adam_m_ = nullptr, *adam_v_ = nullptr;
  float *in_ = nullptr, *cur_ = nullptr, *grad_ = nullptr, *target_ = nullptr, *relu_ = nullptr, *dact_ = nullptr;
  double* loss_ = nullptr;  // 256-byte aligned (atomicAdd)
  std::vector<float*> free_slots_;
  std::map<int, float*> slots_;
  cudaStream_t compute_stream_ = nullptr, h2d_ = nullptr, d2h_ = nullptr;
  cudaEvent_t copied_in_ = nullptr, consumed_in_ = nullptr;
  int device_ = 0;
  void* pinned_ = nullptr;  // the input's staging buffer, then one buffer per output slot
  float* in_staging_ = nullptr;
  std::vector<float*> dev_out_, host_out_;
  std::vector<cudaEvent_t> slot_events_;  // per slot: the copy to the host is done
  std::mutex out_mutex_;
  std::condition_variable out_cv_;
  std::vector<std::size_t> free_out_;
  pipeline::Completion pending_;
  cublasHandle_t blas_ = nullptr;
  std::uint64_t held_ = 0;
  int steps_ = 0;
  int losses_ = 0;
  double last_loss_ = std::numeric_limits<double>::quiet_NaN();
};

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
