#include "nccl_channel.h"

#include <chrono>
#include <cstdio>

#include "cuda_check.h"

namespace contend::pipeline_cuda {

Error nccl_error(ncclResult_t r, const std::string& what) {
  const char* detail = ncclGetLastError(nullptr);
  return make_error(Errc::kIo, what + ": " + ncclGetErrorString(r) +
                                   (detail != nullptr && *detail != '\0' ? std::string(" (") + detail + ")" : ""));
}

Result<void> NcclChannel::allocate(std::size_t capacity_floats) {
  CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&dev_header_), kHeaderWords * sizeof(std::int64_t)));
  CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&host_header_), kHeaderWords * sizeof(std::int64_t)));
  const std::size_t bytes = capacity_floats * sizeof(float);
  if (auto e = cudaMalloc(reinterpret_cast<void**>(&dev_), bytes); e != cudaSuccess) {
    return cuda_error(e, "cudaMalloc(" + std::to_string(bytes) + " bytes, an nccl channel's message buffer)");
  }
  if (auto e = cudaMallocHost(reinterpret_cast<void**>(&host_), bytes); e != cudaSuccess) {
    return cuda_error(e, "cudaMallocHost(" + std::to_string(bytes) + " bytes, an nccl channel's staging buffer)");
  }
  capacity_ = capacity_floats;
  return {};
}

Result<void> NcclChannel::call(const std::string& what, const std::function<ncclResult_t(ncclComm_t)>& f) {
  ncclComm_t comm = nullptr;
  {
    std::lock_guard<std::mutex> lock(guard_);
    if (aborting_ || comm_ == nullptr) {
      return make_error(Errc::kIo, what + ": stopped (the transport is shutting down)");
    }
    in_call_ = true;
    comm = comm_;  // abort() clears comm_ under the lock, never under a running call's feet
  }
  const ncclResult_t r = f(comm);
  {
    std::lock_guard<std::mutex> lock(guard_);
    in_call_ = false;
  }
  if (r != ncclSuccess && r != ncclInProgress) {
    return nccl_error(r, what);
  }
  return {};
}

Result<void> NcclChannel::wait(const std::atomic<bool>& stop, const std::string& what) {
  for (int spins = 0;; ++spins) {
    const cudaError_t q = cudaStreamQuery(stream_);
    if (q == cudaSuccess) {
      return {};
    }
    if (q != cudaErrorNotReady) {
      return cuda_error(q, what);
    }
    if (stop.load()) {
      return make_error(Errc::kIo, what + ": stopped");
    }
    ncclResult_t async = ncclSuccess;
    if (auto ok = call(what, [&](ncclComm_t c) { return ncclCommGetAsyncError(c, &async); }); !ok) {
      return ok;
    }
    if (async != ncclSuccess && async != ncclInProgress) {
      return nccl_error(async, what);
    }
    if (spins < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void NcclChannel::abort(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  ncclComm_t comm = nullptr;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(guard_);
      aborting_ = true;
      if (!in_call_ || std::chrono::steady_clock::now() >= deadline) {
        comm = comm_;
        comm_ = nullptr;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (comm != nullptr) {
    if (cudaSetDevice(device_) != cudaSuccess) {
      std::fprintf(stderr, "contend nccl: cudaSetDevice(%d) failed before aborting a communicator\n", device_);
    }
    ncclCommAbort(comm);
  }
}

NcclChannel::~NcclChannel() {
  abort(std::chrono::milliseconds(100));  // a no-op after the transport's shutdown
  join();
  if (cudaSetDevice(device_) != cudaSuccess) {
    std::fprintf(stderr, "contend nccl: cudaSetDevice(%d) failed while freeing a channel\n", device_);
  }
  if (stream_ != nullptr) {
    cudaStreamDestroy(stream_);
  }
  cudaFree(dev_header_);
  cudaFreeHost(host_header_);
  cudaFree(dev_);
  cudaFreeHost(host_);
}

}  // namespace contend::pipeline_cuda
