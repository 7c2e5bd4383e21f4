#pragma once
// One direction of one neighbour's link in the nccl transport: its two-rank communicator, a
// stream, and device and pinned host buffers for a header and for the largest message, all
// allocated before the communicator exists. Allocating later (on the first message, as an earlier
// version did) means cudaMalloc/cudaMallocHost while other channels' NCCL kernels wait on the GPU
// for their peers, which can block the allocation behind them: a known way to hang NCCL.
// One thread drives a channel; shutdown (another thread) may abort its communicator: every call
// on `comm` goes through call(), which refuses once abort() has begun, so the driving thread never
// touches a communicator that abort() freed. Private to workloads/pipeline/cuda.

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "contend/common/result.h"

namespace contend::pipeline_cuda {

inline constexpr int kHeaderWords = 5;  // kind, iteration, micro-batch, floats, stage

// "<what>: <NCCL's message> (<its last error>)". Reads NCCL's last error without a communicator
// (NCCL ignores the argument), so it is safe after an abort.
Error nccl_error(ncclResult_t r, const std::string& what);

class NcclChannel {
 public:
  NcclChannel(int peer, bool sends, int device) : peer_(peer), sends_(sends), device_(device) {}
  ~NcclChannel();  // aborts the communicator if abort() has not, frees the buffers
  NcclChannel(const NcclChannel&) = delete;
  NcclChannel& operator=(const NcclChannel&) = delete;

  // The stream and buffers for messages of up to `capacity_floats` floats. Call on a thread whose
  // current device is the channel's, before init_comm. kIo naming the call on failure.
  Result<void> allocate(std::size_t capacity_floats);
  // Joins the two-rank communicator `id` as `rank` (inside the caller's ncclGroupStart/End).
  ncclResult_t init_comm(const ncclUniqueId& id, int rank) { return ncclCommInitRank(&comm_, 2, id, rank); }

  // Runs `f(comm)` unless abort() has begun: kIo "<what>: stopped" then, NCCL's error otherwise.
  Result<void> call(const std::string& what, const std::function<ncclResult_t(ncclComm_t)>& f);
  // Waits for the stream's work, watching the communicator for asynchronous errors and `stop`.
  Result<void> wait(const std::atomic<bool>& stop, const std::string& what);

  // Shutdown, from another thread: no call() starts after this; a call already inside NCCL gets
  // `grace` to return (a status query does at once), and one still inside after that is blocked
  // (on a dead peer) and returns because the communicator is aborted under it, NCCL's own way of
  // ending a hung operation. Idempotent.
  void abort(std::chrono::milliseconds grace);

  void start(std::function<void()> body) { thread_ = std::thread(std::move(body)); }
  void join() {
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  bool started() const { return thread_.joinable(); }
  bool done() const { return done_.load(); }
  void set_done() { done_ = true; }

  int peer() const { return peer_; }
  bool sends() const { return sends_; }
  int device() const { return device_; }
  std::size_t capacity() const { return capacity_; }
  cudaStream_t stream() const { return stream_; }
  std::int64_t* dev_header() const { return dev_header_; }
  std::int64_t* host_header() const { return host_header_; }  // pinned
  float* dev() const { return dev_; }
  float* host() const { return host_; }  // pinned

 private:
  int peer_;
  bool sends_;
  int device_;
  std::size_t capacity_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::int64_t* dev_header_ = nullptr;
  std::int64_t* host_header_ = nullptr;
  float* dev_ = nullptr;
  float* host_ = nullptr;
  std::mutex guard_;       // orders call() against abort()
  bool aborting_ = false;  // under guard_
  bool in_call_ = false;   // under guard_
  std::thread thread_;
  std::atomic<bool> done_{false};
};

}  // namespace contend::pipeline_cuda

// In a function returning Result: returns nccl_error naming <expr> on failure.
#define NCCL_TRY(expr)                                        \
  do {                                                        \
    if (ncclResult_t r_ = (expr); r_ != ncclSuccess) {        \
      return ::contend::pipeline_cuda::nccl_error(r_, #expr); \
    }                                                         \
  } while (0)
