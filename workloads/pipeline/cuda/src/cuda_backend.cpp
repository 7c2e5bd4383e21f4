#include "contend/pipeline_cuda/cuda_backend.h"

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

#include "kernels.cuh"

namespace contend::pipeline_cuda {
namespace {

using pipeline::ComputeBackend;
using pipeline::ModelConfig;

// A CUDA or cuBLAS failure in the middle of a step has no recovery: abort naming the call and
// where (the bug tier of STYLE.md); setup failures are Results (make_cuda_backend).
void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "contend cuda: %s failed at %s:%d: %s\n", what, file, line, cudaGetErrorString(e));
    std::abort();
  }
}
void check(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "contend cuda: %s failed at %s:%d: cuBLAS status %d\n", what, file, line, static_cast<int>(s));
    std::abort();
  }
}
#define CUDA_CHECK(expr) check((expr), #expr, __FILE__, __LINE__)

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
    P_ = static_cast<std::size_t>(h_) * f_ * 2 + f_ + h_;
    per_layer_ = static_cast<std::size_t>(T_) * (h_ + f_);
    slot_floats_ = per_layer_ * layers_ + (last_ ? static_cast<std::size_t>(T_) * h_ : 0);
  }

  ~CudaBackend() override {
    // Completions still queued in a transport hold slots: the transport is destroyed first
    // (worker.cpp), which runs or drops them. An untaken one goes now, while its event exists.
    pending_ = nullptr;
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

  // Everything the stage will ever use, in one allocation.
  std::size_t arena_floats() const {
    const std::size_t th = static_cast<std::size_t>(T_) * h_;
    const std::size_t tf = static_cast<std::size_t>(T_) * f_;
    return 4 * P_ * layers_ + static_cast<std::size_t>(m_) * slot_floats_ + 4 * th + 2 * tf + 2 /* loss */ +
           out_slots() * th;
  }

  // Outputs in flight to the transport: a whole iteration's activations and gradients.
  std::size_t out_slots() const { return 2 * static_cast<std::size_t>(m_); }

  Result<void> init(int device) {
    device_ = device;
    if (auto e = cudaSetDevice(device); e != cudaSuccess) {
      return make_error(Errc::kUnsupported,
                        std::string("cudaSetDevice(") + std::to_string(device) + "): " + cudaGetErrorString(e));
    }
    const std::size_t bytes = arena_floats() * sizeof(float);
    if (auto e = cudaMalloc(&arena_, bytes); e != cudaSuccess) {
      return make_error(Errc::kIo,
                        "cudaMalloc(" + std::to_string(bytes) + " bytes, the stage's arena): " + cudaGetErrorString(e));
    }
    arena_bytes_ = bytes;
    CUDA_CHECK(cudaMemset(arena_, 0, bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&compute_stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&copied_in_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&consumed_in_, cudaEventDisableTiming));
    // Pinned host memory: the input's staging buffer and one buffer per output slot, so copies
    // both ways are DMA that runs beside the compute stream.
    const std::size_t th_bytes = bytes_th();
    const std::size_t pinned_bytes = (1 + out_slots()) * th_bytes;
    if (auto e = cudaMallocHost(&pinned_, pinned_bytes); e != cudaSuccess) {
      return make_error(Errc::kIo, "cudaMallocHost(" + std::to_string(pinned_bytes) +
                                       " bytes, the stage's pinned buffers): " + cudaGetErrorString(e));
    }
    in_staging_ = static_cast<float*>(pinned_);
    for (std::size_t j = 0; j < out_slots(); ++j) {
      cudaEvent_t e = nullptr;
      CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync));
      slot_events_.push_back(e);
      free_out_.push_back(j);
    }
    CUDA_CHECK(cublasCreate(&blas_));
    CUDA_CHECK(cublasSetStream(blas_, compute_stream_));
    std::size_t used = 0;
    const auto take = [&](std::size_t floats) {
      float* p = arena_ + used;
      used += floats;
      return p;
    };
    params_ = take(P_ * layers_);
    grads_ = take(P_ * layers_);
    adam_m_ = take(P_ * layers_);
    adam_v_ = take(P_ * layers_);
    for (int i = 0; i < m_; ++i) {
      free_slots_.push_back(take(slot_floats_));
    }
    const std::size_t th = static_cast<std::size_t>(T_) * h_;
    const std::size_t tf = static_cast<std::size_t>(T_) * f_;
    in_ = take(th);
    cur_ = take(th);
    grad_ = take(th);
    target_ = take(th);
    relu_ = take(tf);
    dact_ = take(tf);
    loss_ = reinterpret_cast<double*>(take(2));
    for (std::size_t j = 0; j < out_slots(); ++j) {
      dev_out_.push_back(take(th));
      host_out_.push_back(in_staging_ + (j + 1) * th);
    }
    // The same initial weights as the cpu backend (MlpStage), so runs compare exactly.
    std::vector<float> host(P_ * layers_);
    for (int l = 0; l < layers_; ++l) {
      std::size_t k = l * P_;
      for (const std::vector<float>* p : reference_.params(l)) {
        std::copy(p->begin(), p->end(), host.begin() + static_cast<std::ptrdiff_t>(k));
        k += p->size();
      }
    }
    CUDA_CHECK(cudaMemcpy(params_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    return {};
  }

  std::size_t message_floats() const override { return model_.activation_floats(); }

  // `out` and `grad_in` are filled in by the completions (take_completion), not here.
  void forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& /*out*/) override {
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
      const float* w1 = params_ + l * P_;
      const float* b1 = w1 + static_cast<std::size_t>(h_) * f_;
      const float* w2 = b1 + f_;
      const float* b2 = w2 + static_cast<std::size_t>(f_) * h_;
      float* xs = slot + l * per_layer_;
      float* as = xs + static_cast<std::size_t>(T_) * h_;
      CUDA_CHECK(cudaMemcpyAsync(xs, cur_, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
      kernels::broadcast_rows(as, b1, T_, f_, compute_stream_);
      gemm(CUBLAS_OP_N, CUBLAS_OP_N, T_, f_, h_, xs, h_, w1, f_, 1.0f, as, f_);
      kernels::relu(relu_, as, T_ * f_, compute_stream_);
      kernels::add_rows(cur_, b2, T_, h_, compute_stream_);
      gemm(CUBLAS_OP_N, CUBLAS_OP_N, T_, h_, f_, relu_, f_, w2, h_, 1.0f, cur_, h_);
    }
    if (last_) {
      copy_in(target_, pipeline::synthetic_target(model_, input));
      float* dy = slot + per_layer_ * layers_;
      kernels::mse(dy, cur_, target_, T_ * h_, m_, loss_, compute_stream_);
      input_consumed();
      ++losses_;
    } else {
      copy_out(cur_);
    }
    held_ += per_layer_ * layers_ * sizeof(float);
  }

  void backward(int, int mb, const std::vector<float>& grad_out, std::vector<float>& /*grad_in*/) override {
    auto it = slots_.find(mb);
    CONTEND_CHECK(it != slots_.end(), "cuda: backward of micro-batch " + std::to_string(mb) + " without its forward");
    float* slot = it->second;
    if (last_) {
      CUDA_CHECK(
          cudaMemcpyAsync(grad_, slot + per_layer_ * layers_, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
    } else {
      copy_in(in_, grad_out);
      CUDA_CHECK(cudaMemcpyAsync(grad_, in_, bytes_th(), cudaMemcpyDeviceToDevice, compute_stream_));
      input_consumed();
    }
    for (int l = layers_ - 1; l >= 0; --l) {
      const float* w1 = params_ + l * P_;
      const float* w2 = w1 + static_cast<std::size_t>(h_) * f_ + f_;
      float* gw1 = grads_ + l * P_;
      float* gb1 = gw1 + static_cast<std::size_t>(h_) * f_;
      float* gw2 = gb1 + f_;
      float* gb2 = gw2 + static_cast<std::size_t>(f_) * h_;
      const float* xs = slot + l * per_layer_;
      const float* as = xs + static_cast<std::size_t>(T_) * h_;
      kernels::relu(relu_, as, T_ * f_, compute_stream_);
      gemm(CUBLAS_OP_T, CUBLAS_OP_N, f_, h_, T_, relu_, f_, grad_, h_, 1.0f, gw2, h_);  // dW2 += r^T dy
      kernels::column_sums(gb2, grad_, T_, h_, compute_stream_);
      gemm(CUBLAS_OP_N, CUBLAS_OP_T, T_, f_, h_, grad_, h_, w2, h_, 0.0f, dact_, f_);  // da = dy W2^T
      kernels::relu_grad(dact_, as, T_ * f_, compute_stream_);
      gemm(CUBLAS_OP_T, CUBLAS_OP_N, h_, f_, T_, xs, h_, dact_, f_, 1.0f, gw1, f_);  // dW1 += x^T da
      kernels::column_sums(gb1, dact_, T_, f_, compute_stream_);
      gemm(CUBLAS_OP_N, CUBLAS_OP_T, T_, h_, f_, dact_, f_, w1, f_, 1.0f, grad_, h_);  // dx = dy + da W1^T
    }
    if (stage_ > 0) {
      copy_out(grad_);
    }
    free_slots_.push_back(slot);
    slots_.erase(it);
    held_ -= per_layer_ * layers_ * sizeof(float);
  }

  void step() override {
    ++steps_;
    const float lr = static_cast<float>(model_.lr);
    const int n = static_cast<int>(P_ * layers_);
    if (model_.optimizer == "adam") {
      const float c1 = 1.0f - std::pow(0.9f, static_cast<float>(steps_));
      const float c2 = 1.0f - std::pow(0.999f, static_cast<float>(steps_));
      kernels::adam(params_, grads_, adam_m_, adam_v_, lr, c1, c2, n, compute_stream_);
    } else {
      kernels::sgd(params_, grads_, lr, n, compute_stream_);
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

  std::vector<std::vector<float>> layer(const float* base, int l) const {
    std::vector<float> all(P_);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(all.data(), base + l * P_, P_ * sizeof(float), cudaMemcpyDeviceToHost));
    const std::size_t sizes[] = {static_cast<std::size_t>(h_) * f_, static_cast<std::size_t>(f_),
                                 static_cast<std::size_t>(f_) * h_, static_cast<std::size_t>(h_)};
    std::vector<std::vector<float>> out;
    std::size_t k = 0;
    for (std::size_t s : sizes) {
      out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(k), all.begin() + static_cast<std::ptrdiff_t>(k + s));
      k += s;
    }
    return out;
  }
  const float* params() const { return params_; }
  const float* grads() const { return grads_; }
  std::uint64_t arena_bytes() const { return arena_bytes_; }

 private:
  std::size_t bytes_th() const { return static_cast<std::size_t>(T_) * h_ * sizeof(float); }

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
  void release_out_slot(std::size_t j) {
    if (cudaEventSynchronize(slot_events_[j]) != cudaSuccess) {
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
  pipeline::MlpStage reference_;  // the initial weights
  int T_ = 0, h_ = 0, f_ = 0, layers_ = 0;
  std::size_t P_ = 0, per_layer_ = 0, slot_floats_ = 0;
  float* arena_ = nullptr;
  std::uint64_t arena_bytes_ = 0;
  float *params_ = nullptr, *grads_ = nullptr, *adam_m_ = nullptr, *adam_v_ = nullptr;
  float *in_ = nullptr, *cur_ = nullptr, *grad_ = nullptr, *target_ = nullptr, *relu_ = nullptr, *dact_ = nullptr;
  double* loss_ = nullptr;
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

void register_cuda_backend() {
  pipeline::backends().add(
      {"", "cuda", "the model on a GPU: cuBLAS GEMMs and kernels, one device arena per stage",
       {ParamDef::choice("math", "GEMM math: cuBLAS compute type (storage stays fp32)", "fp32",
                         {"fp32", "tf32", "bf16"})}},
      {true, true, [](const Spec& spec, const pipeline::BackendContext& c, int rank) {
         CudaOptions o;
         o.math = spec.text("math");
         return make_cuda_backend(c.model, rank, c.world_size, c.microbatches, o);
       },
       []() -> Result<void> {
         int count = 0;
         if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
           return make_error(Errc::kUnsupported, std::string("the cuda backend needs a CUDA device: ") +
                                                     (e != cudaSuccess ? cudaGetErrorString(e) : "none visible"));
         }
         return {};
       }});
}

}  // namespace contend::pipeline_cuda
