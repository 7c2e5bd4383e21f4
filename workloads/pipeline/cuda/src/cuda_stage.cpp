// The cuda stage's setup and teardown, and the device helpers its actions use: copies in and out,
// the output slots, the row-major GEMM. Its actions are in cuda_backend.cpp.
#include "cuda_stage.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace contend::pipeline_cuda::detail {

CudaBackend::CudaBackend(const pipeline::ModelConfig& model, int stage, int num_stages, int microbatches,
                         cublasComputeType_t compute)
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

CudaBackend::~CudaBackend() {
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

// Everything the stage will ever use, in one device allocation and one pinned one, carved as
// plan_arena lays it out (256-byte aligned). The zeroing and the initial weights go on the
// compute stream, which is synchronized before returning: the other streams are non-blocking,
// so work on the legacy stream would not be ordered before theirs.
Result<void> CudaBackend::init(int device) {
  device_ = device;
  if (auto e = cudaSetDevice(device); e != cudaSuccess) {
    return make_error(Errc::kUnsupported,
                      std::string("cudaSetDevice(") + std::to_string(device) + "): " + cudaGetErrorString(e));
  }
  if (auto ok = plan_layout(); !ok) {
    return ok;
  }
  if (auto ok = create_streams(); !ok) {
    return ok;
  }
  if (auto ok = allocate_memory(); !ok) {
    return ok;
  }
  if (auto ok = create_slot_events(); !ok) {
    return ok;
  }
  if (auto ok = create_blas(); !ok) {
    return ok;
  }
  carve_arena();
  return upload_weights();
}

Result<void> CudaBackend::plan_layout() {
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
  return {};
}

Result<void> CudaBackend::create_streams() {
  CUDA_TRY(cudaStreamCreateWithFlags(&compute_stream_, cudaStreamNonBlocking));
  CUDA_TRY(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking));
  CUDA_TRY(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking));
  CUDA_TRY(cudaEventCreateWithFlags(&copied_in_, cudaEventDisableTiming));
  CUDA_TRY(cudaEventCreateWithFlags(&consumed_in_, cudaEventDisableTiming));
  return {};
}

Result<void> CudaBackend::allocate_memory() {
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
  return {};
}

Result<void> CudaBackend::create_slot_events() {
  for (std::size_t j = 0; j < out_slots(); ++j) {
    cudaEvent_t e = nullptr;
    CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync));
    slot_events_.push_back(e);
    free_out_.push_back(j);
  }
  return {};
}

Result<void> CudaBackend::create_blas() {
  CUDA_TRY(cublasCreate(&blas_));
  CUDA_TRY(cublasSetStream(blas_, compute_stream_));
  return {};
}

void CudaBackend::carve_arena() {
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
}

Result<void> CudaBackend::upload_weights() {
  // The same initial weights as the cpu backend (MlpStage), so runs compare exactly.
  std::vector<float> host(layout_.parameters);
  for (int l = 0; l < layers_; ++l) {
    std::size_t k = static_cast<std::size_t>(l) * layout_.params_per_layer;
    for (const std::vector<float>* p : reference_.params(l)) {
      std::copy(p->begin(), p->end(), host.begin() + static_cast<std::ptrdiff_t>(k));
      k += p->size();
    }
  }
  CUDA_TRY(cudaMemcpyAsync(params_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, compute_stream_));
  CUDA_TRY(cudaStreamSynchronize(compute_stream_));  // `host` goes out of scope; the other streams start clean
  return {};
}

// Host to device through the pinned staging buffer on the copy stream, after the compute stream
// is done with the previous input; the compute stream waits for the copy. The host does not wait
// for the device: the staging buffer is reused only once the previous copy finished.
void CudaBackend::copy_in(float* dst, const std::vector<float>& src) {
  CONTEND_CHECK(src.size() * sizeof(float) == bytes_th(), "cuda: an input of the wrong size");
  CUDA_CHECK(cudaEventSynchronize(copied_in_));
  std::memcpy(in_staging_, src.data(), bytes_th());
  CUDA_CHECK(cudaStreamWaitEvent(h2d_, consumed_in_, 0));
  CUDA_CHECK(cudaMemcpyAsync(dst, in_staging_, bytes_th(), cudaMemcpyHostToDevice, h2d_));
  CUDA_CHECK(cudaEventRecord(copied_in_, h2d_));
  CUDA_CHECK(cudaStreamWaitEvent(compute_stream_, copied_in_, 0));
}

// `src` copied into an output slot on the compute stream (so the next action may overwrite it)
// and from there to pinned memory on the other copy stream, while the next action computes.
// The output tensor is filled in by the completion (take_completion), which the transport runs
// on its sending thread: it waits for the copy and releases the slot, also when dropped unrun.
void CudaBackend::copy_out(const float* src) {
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

std::size_t CudaBackend::acquire_out_slot() {
  std::unique_lock<std::mutex> lock(out_mutex_);
  out_cv_.wait(lock, [&] { return !free_out_.empty(); });  // the transport is behind by a whole iteration
  const std::size_t j = free_out_.back();
  free_out_.pop_back();
  return j;
}

void CudaBackend::release_out_slot(std::size_t j) {
  if (cudaSetDevice(device_) != cudaSuccess || cudaEventSynchronize(slot_events_[j]) != cudaSuccess) {
    std::fprintf(stderr, "contend cuda: an output copy failed\n");
  }
  std::lock_guard<std::mutex> lock(out_mutex_);
  free_out_.push_back(j);
  out_cv_.notify_all();
}

// Row-major C = alpha op(A) op(B) + beta C, as cblas_sgemm(CblasRowMajor, ...) takes it: cuBLAS
// is column-major, so it computes C^T = op(B)^T op(A)^T with the operands swapped.
void CudaBackend::gemm(cublasOperation_t ta, cublasOperation_t tb, int M, int N, int K, const float* A, int lda,
                       const float* B, int ldb, float beta, float* C, int ldc) {
  const float alpha = 1.0f;
  CUDA_CHECK(cublasGemmEx(blas_, tb, ta, N, M, K, &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &beta, C, CUDA_R_32F,
                          ldc, compute_, CUBLAS_GEMM_DEFAULT));
}

}  // namespace contend::pipeline_cuda::detail
