#pragma once
// How the cuda code handles CUDA and cuBLAS return codes (STYLE.md's error tiers):
//  - setup (allocations, streams, handles) returns a Result naming the call: CUDA_TRY;
//  - a failure in the middle of a step has no recovery: CUDA_CHECK aborts naming the call and
//    file:line. Kernel launches return cudaGetLastError() (kernels.cuh), so they are checked the
//    same way at their call sites.
// Private to workloads/pipeline/cuda.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "contend/common/result.h"

namespace contend::pipeline_cuda {

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "contend cuda: %s failed at %s:%d: %s\n", what, file, line, cudaGetErrorString(e));
    std::abort();
  }
}
inline void check(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "contend cuda: %s failed at %s:%d: %s\n", what, file, line, cublasGetStatusString(s));
    std::abort();
  }
}

inline Error cuda_error(cudaError_t e, const std::string& what) {
  return make_error(Errc::kIo, what + ": " + cudaGetErrorString(e));
}
inline Error cuda_error(cublasStatus_t s, const std::string& what) {
  return make_error(Errc::kIo, what + ": " + cublasGetStatusString(s));
}
inline bool failed(cudaError_t e) {
  return e != cudaSuccess;
}
inline bool failed(cublasStatus_t s) {
  return s != CUBLAS_STATUS_SUCCESS;
}

}  // namespace contend::pipeline_cuda

#define CUDA_CHECK(expr) ::contend::pipeline_cuda::check((expr), #expr, __FILE__, __LINE__)
// In a function returning Result: returns kIo "<expr>: <CUDA's message>" on failure.
#define CUDA_TRY(expr)                                                      \
  do {                                                                      \
    if (auto status_ = (expr); ::contend::pipeline_cuda::failed(status_)) { \
      return ::contend::pipeline_cuda::cuda_error(status_, #expr);          \
    }                                                                       \
  } while (0)
