#pragma once
// Elementwise and reduction kernels of the cuda backend; each launch on the given stream. Counts
// are std::size_t and the kernels loop grid-stride (launch_geometry.h), so no count overflows an
// int. Each function returns cudaGetLastError() after its launch (a bad configuration, or an
// earlier asynchronous fault), which the caller checks where it can name the call (CUDA_CHECK).

#include <cuda_runtime.h>

#include <cstddef>

namespace contend::pipeline_cuda::kernels {

// a[t * n + j] = b[j] for t < rows.
cudaError_t broadcast_rows(float* a, const float* b, std::size_t rows, std::size_t n, cudaStream_t s);
// y[t * n + j] += b[j].
cudaError_t add_rows(float* y, const float* b, std::size_t rows, std::size_t n, cudaStream_t s);
// out[i] = max(in[i], 0).
cudaError_t relu(float* out, const float* in, std::size_t n, cudaStream_t s);
// g[i] = a[i] > 0 ? g[i] : 0.
cudaError_t relu_grad(float* g, const float* a, std::size_t n, cudaStream_t s);
// acc[j] += sum over t < rows of x[t * n + j].
cudaError_t column_sums(float* acc, const float* x, std::size_t rows, std::size_t n, cudaStream_t s);
// p -= lr * g; g = 0.
cudaError_t sgd(float* p, float* g, float lr, std::size_t n, cudaStream_t s);
// Adam with bias corrections c1 = 1 - b1^t, c2 = 1 - b2^t; g = 0.
cudaError_t adam(float* p, float* g, float* m, float* v, float lr, float c1, float c2, std::size_t n, cudaStream_t s);
// dy = (y - t) / (n * microbatches); *loss_sum += 0.5 * sum (y - t)^2 / n. `loss_sum` must be
// 8-byte aligned (atomicAdd on a double): the arena carves it on a 256-byte boundary.
cudaError_t mse(float* dy, const float* y, const float* t, std::size_t n, int microbatches, double* loss_sum,
                cudaStream_t s);

}  // namespace contend::pipeline_cuda::kernels
