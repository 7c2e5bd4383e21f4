#pragma once
// The cuda backend's stage (cuda_backend.h says what it does). Declared here, not in an anonymous
// namespace, because two translation units define it: its setup, teardown and device helpers in
// cuda_stage.cpp, its actions (forward, backward, step, layer) in cuda_backend.cpp.
// Private to workloads/pipeline/cuda. Not thread-safe: one compute thread per stage.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "contend/common/result.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/compute/model.h"
#include "contend/pipeline_cuda/arena_layout.h"
#include "cuda_check.h"

namespace contend::pipeline_cuda::detail {

class CudaBackend : public pipeline::ComputeBackend {
 public:
  CudaBackend(const pipeline::ModelConfig& model, int stage, int num_stages, int microbatches,
              cublasComputeType_t compute);
  ~CudaBackend() override;

  // Outputs in flight to the transport: a whole iteration's activations and gradients.
  std::size_t out_slots() const { return 2 * static_cast<std::size_t>(m_); }

  // Every buffer, stream and handle of the stage on `device`, and the initial weights
  // (cuda_stage.cpp says how).
  Result<void> init(int device);

  std::size_t message_floats() const override { return model_.activation_floats(); }

  void forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& out) override;
  void backward(int iteration, int mb, const std::vector<float>& grad_out, std::vector<float>& grad_in) override;
  void step() override;

  double loss() const override { return last_ ? last_loss_ : std::numeric_limits<double>::quiet_NaN(); }
  pipeline::Completion take_completion() override { return std::exchange(pending_, {}); }
  std::uint64_t held_bytes() const override { return held_; }

  // Layer l of `base` (parameters or gradients) on the host, in the cpu backend's order.
  std::vector<std::vector<float>> layer(const float* base, int l) const;
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

  // init's steps, in its order (cuda_stage.cpp).
  Result<void> plan_layout();
  Result<void> create_streams();
  Result<void> allocate_memory();
  Result<void> create_slot_events();
  Result<void> create_blas();
  void carve_arena();
  Result<void> upload_weights();

  // Host to device through the pinned staging buffer on the copy stream (cuda_stage.cpp).
  void copy_in(float* dst, const std::vector<float>& src);
  // The compute stream is done reading the input buffer (it was copied on).
  void input_consumed() { CUDA_CHECK(cudaEventRecord(consumed_in_, compute_stream_)); }

  // `src` to the transport through an output slot and pinned memory (cuda_stage.cpp).
  void copy_out(const float* src);
  std::size_t acquire_out_slot();
  // Runs on whichever thread drops the completion (the transport's, or this one's): on this device.
  void release_out_slot(std::size_t j);

  // Row-major C = alpha op(A) op(B) + beta C with alpha 1, as cblas_sgemm takes it (cuda_stage.cpp).
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int M, int N, int K, const float* A, int lda, const float* B,
            int ldb, float beta, float* C, int ldc);

  pipeline::ModelConfig model_;
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

}  // namespace contend::pipeline_cuda::detail
