#include "kernels.cuh"

namespace contend::pipeline_cuda::kernels {
namespace {

constexpr int kThreads = 256;
int blocks(long long n) {
  return static_cast<int>((n + kThreads - 1) / kThreads);
}

__global__ void broadcast_rows_k(float* a, const float* b, int rows, int n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < static_cast<long long>(rows) * n) {
    a[i] = b[i % n];
  }
}
__global__ void add_rows_k(float* y, const float* b, int rows, int n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < static_cast<long long>(rows) * n) {
    y[i] += b[i % n];
  }
}
__global__ void relu_k(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = fmaxf(in[i], 0.0f);
  }
}
__global__ void relu_grad_k(float* g, const float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && a[i] <= 0.0f) {
    g[i] = 0.0f;
  }
}
__global__ void column_sums_k(float* acc, const float* x, int rows, int n) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float s = 0.0f;
    for (int t = 0; t < rows; ++t) {
      s += x[static_cast<long long>(t) * n + j];
    }
    acc[j] += s;
  }
}
__global__ void sgd_k(float* p, float* g, float lr, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i] -= lr * g[i];
    g[i] = 0.0f;
  }
}
__global__ void adam_k(float* p, float* g, float* m, float* v, float lr, float c1, float c2, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    p[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
    g[i] = 0.0f;
  }
}
__global__ void mse_k(float* dy, const float* y, const float* t, int n, int microbatches, double* loss_sum) {
  __shared__ double part[kThreads];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  double d2 = 0;
  if (i < n) {
    const double d = static_cast<double>(y[i]) - t[i];
    dy[i] = static_cast<float>(d / (static_cast<double>(n) * microbatches));
    d2 = d * d;
  }
  part[threadIdx.x] = d2;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      part[threadIdx.x] += part[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(loss_sum, 0.5 * part[0] / n);
  }
}

}  // namespace

void broadcast_rows(float* a, const float* b, int rows, int n, cudaStream_t s) {
  broadcast_rows_k<<<blocks(static_cast<long long>(rows) * n), kThreads, 0, s>>>(a, b, rows, n);
}
void add_rows(float* y, const float* b, int rows, int n, cudaStream_t s) {
  add_rows_k<<<blocks(static_cast<long long>(rows) * n), kThreads, 0, s>>>(y, b, rows, n);
}
void relu(float* out, const float* in, int n, cudaStream_t s) {
  relu_k<<<blocks(n), kThreads, 0, s>>>(out, in, n);
}
void relu_grad(float* g, const float* a, int n, cudaStream_t s) {
  relu_grad_k<<<blocks(n), kThreads, 0, s>>>(g, a, n);
}
void column_sums(float* acc, const float* x, int rows, int n, cudaStream_t s) {
  column_sums_k<<<blocks(n), kThreads, 0, s>>>(acc, x, rows, n);
}
void sgd(float* p, float* g, float lr, int n, cudaStream_t s) {
  sgd_k<<<blocks(n), kThreads, 0, s>>>(p, g, lr, n);
}
void adam(float* p, float* g, float* m, float* v, float lr, float c1, float c2, int n, cudaStream_t s) {
  adam_k<<<blocks(n), kThreads, 0, s>>>(p, g, m, v, lr, c1, c2, n);
}
void mse(float* dy, const float* y, const float* t, int n, int microbatches, double* loss_sum, cudaStream_t s) {
  mse_k<<<blocks(n), kThreads, 0, s>>>(dy, y, t, n, microbatches, loss_sum);
}

}  // namespace contend::pipeline_cuda::kernels
