#pragma once
// Elementwise and reduction kernels of the cuda backend; each launch on the given stream.

#include <cuda_runtime.h>

namespace contend::pipeline_cuda::kernels {

// a[t * n + j] = b[j] for t < rows.
void broadcast_rows(float* a, const float* b, int rows, int n, cudaStream_t s);
// y[t * n + j] += b[j].
void add_rows(float* y, const float* b, int rows, int n, cudaStream_t s);
// out[i] = max(in[i], 0).
void relu(float* out, const float* in, int n, cudaStream_t s);
// g[i] = a[i] > 0 ? g[i] : 0.
void relu_grad(float* g, const float* a, int n, cudaStream_t s);
// acc[j] += sum over t < rows of x[t * n + j].
void column_sums(float* acc, const float* x, int rows, int n, cudaStream_t s);
// p -= lr * g; g = 0.
void sgd(float* p, float* g, float lr, int n, cudaStream_t s);
// Adam with bias corrections c1 = 1 - b1^t, c2 = 1 - b2^t; g = 0.
void adam(float* p, float* g, float* m, float* v, float lr, float c1, float c2, int n, cudaStream_t s);
// dy = (y - t) / (n * microbatches); *loss_sum += 0.5 * sum (y - t)^2 / n.
void mse(float* dy, const float* y, const float* t, int n, int microbatches, double* loss_sum, cudaStream_t s);

}  // namespace contend::pipeline_cuda::kernels
