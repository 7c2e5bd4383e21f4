#include "contend/pipeline_cuda/launch_geometry.h"
#include "kernels.cuh"

namespace contend::pipeline_cuda::kernels {
namespace {

// Grid-stride loop over [0, n) in std::size_t.
__device__ std::size_t first_index() {
  return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
}
__device__ std::size_t stride() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

__global__ void broadcast_rows_k(float* a, const float* b, std::size_t total, std::size_t n) {
  for (std::size_t i = first_index(); i < total; i += stride()) {
    a[i] = b[i % n];
  }
}
__global__ void add_rows_k(float* y, const float* b, std::size_t total, std::size_t n) {
  for (std::size_t i = first_index(); i < total; i += stride()) {
    y[i] += b[i % n];
  }
}
__global__ void relu_k(float* out, const float* in, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += stride()) {
    out[i] = fmaxf(in[i], 0.0f);
  }
}
__global__ void relu_grad_k(float* g, const float* a, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += stride()) {
    if (a[i] <= 0.0f) {
      g[i] = 0.0f;
    }
  }
}
__global__ void column_sums_k(float* acc, const float* x, std::size_t rows, std::size_t n) {
  for (std::size_t j = first_index(); j < n; j += stride()) {
    float s = 0.0f;
    for (std::size_t t = 0; t < rows; ++t) {
      s += x[t * n + j];
    }
    acc[j] += s;
  }
}
__global__ void sgd_k(float* p, float* g, float lr, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += stride()) {
    p[i] -= lr * g[i];
    g[i] = 0.0f;
  }
}
__global__ void adam_k(float* p, float* g, float* m, float* v, float lr, float c1, float c2, std::size_t n) {
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  for (std::size_t i = first_index(); i < n; i += stride()) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    p[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
    g[i] = 0.0f;
  }
}
// Each thread sums its grid-stride share, each block reduces its threads' sums in shared memory,
// and one atomicAdd per block adds it to the total.
__global__ void mse_k(float* dy, const float* y, const float* t, std::size_t n, int microbatches, double* loss_sum) {
  __shared__ double part[kThreads];
  const double scale = static_cast<double>(n) * microbatches;
  double d2 = 0;
  for (std::size_t i = first_index(); i < n; i += stride()) {
    const double d = static_cast<double>(y[i]) - t[i];
    dy[i] = static_cast<float>(d / scale);
    d2 += d * d;
  }
  part[threadIdx.x] = d2;
  __syncthreads();
  for (unsigned width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      part[threadIdx.x] += part[threadIdx.x + width];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(loss_sum, 0.5 * part[0] / static_cast<double>(n));
  }
}
}  // namespace

cudaError_t broadcast_rows(float* a, const float* b, std::size_t rows, std::size_t n, cudaStream_t s) {
  broadcast_rows_k<<<grid_blocks(rows * n), kThreads, 0, s>>>(a, b, rows * n, n);
  return cudaGetLastError();
}
cudaError_t add_rows(float* y, const float* b, std::size_t rows, std::size_t n, cudaStream_t s) {
  add_rows_k<<<grid_blocks(rows * n), kThreads, 0, s>>>(y, b, rows * n, n);
  return cudaGetLastError();
}
cudaError_t relu(float* out, const float* in, std::size_t n, cudaStream_t s) {
  relu_k<<<grid_blocks(n), kThreads, 0, s>>>(out, in, n);
  return cudaGetLastError();
}
cudaError_t relu_grad(float* g, const float* a, std::size_t n, cudaStream_t s) {
  relu_grad_k<<<grid_blocks(n), kThreads, 0, s>>>(g, a, n);
  return cudaGetLastError();
}
cudaError_t column_sums(float* acc, const float* x, std::size_t rows, std::size_t n, cudaStream_t s) {
  column_sums_k<<<grid_blocks(n), kThreads, 0, s>>>(acc, x, rows, n);
  return cudaGetLastError();
}
cudaError_t sgd(float* p, float* g, float lr, std::size_t n, cudaStream_t s) {
  sgd_k<<<grid_blocks(n), kThreads, 0, s>>>(p, g, lr, n);
  return cudaGetLastError();
}
cudaError_t adam(float* p, float* g, float* m, float* v, float lr, float c1, float c2, std::size_t n, cudaStream_t s) {
  adam_k<<<grid_blocks(n), kThreads, 0, s>>>(p, g, m, v, lr, c1, c2, n);
  return cudaGetLastError();
}
cudaError_t mse(float* dy, const float* y, const float* t, std::size_t n, int microbatches, double* loss_sum,
                cudaStream_t s) {
  mse_k<<<grid_blocks(n), kThreads, 0, s>>>(dy, y, t, n, microbatches, loss_sum);
  return cudaGetLastError();
}

}  // namespace contend::pipeline_cuda::kernels
