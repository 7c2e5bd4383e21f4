// Stage GEMM throughput against cuBLAS's own best on this GPU (issue 8: 70%+ on H200 for hidden
// 4096+). The reference is an 8192^3 GEMM in the same math mode, measured in the same run; the
// stage shapes are the cuda backend's forward and backward GEMMs for T tokens, hidden h, ffn 4h.
// Run: build/default/bin/contend_bench_gpu_gemm [tf32|bf16|fp32]  (needs a CUDA device)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

double tflops(cublasHandle_t h, cublasComputeType_t ct, int M, int N, int K, float* A, float* B, float* C) {
  const float one = 1.0f, zero = 0.0f;
  const auto run = [&] {
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_32F, N, A, CUDA_R_32F, K, &zero, C, CUDA_R_32F,
                 N, ct, CUBLAS_GEMM_DEFAULT);
  };
  for (int i = 0; i < 3; ++i) {
    run();
  }
  cudaDeviceSynchronize();
  const int reps = 20;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    run();
  }
  cudaDeviceSynchronize();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  return 2.0 * M * N * K / s / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string math = argc > 1 ? argv[1] : "tf32";
  const cublasComputeType_t ct = math == "bf16"   ? CUBLAS_COMPUTE_32F_FAST_16BF
                                 : math == "fp32" ? CUBLAS_COMPUTE_32F
                                                  : CUBLAS_COMPUTE_32F_FAST_TF32;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  cublasHandle_t h;
  cublasCreate(&h);
  const size_t big = 8192;
  float *A, *B, *C;
  cudaMalloc(&A, big * big * 4 * sizeof(float));
  cudaMalloc(&B, big * big * 4 * sizeof(float));
  cudaMalloc(&C, big * big * 4 * sizeof(float));
  cudaMemset(A, 0, big * big * 4 * sizeof(float));
  cudaMemset(B, 0, big * big * 4 * sizeof(float));
  const double peak = tflops(h, ct, 8192, 8192, 8192, A, B, C);
  std::printf("%s, %s: reference 8192^3 GEMM %.1f TFLOP/s\n", p.name, math.c_str(), peak);
  std::printf("%-8s %-8s %-34s %10s %10s\n", "hidden", "tokens", "gemm (M x N x K)", "TFLOP/s", "vs ref");
  for (int hidden : {1024, 2048, 4096, 8192}) {
    const int T = 4096;
    const int f = 4 * hidden;
    const struct {
      const char* name;
      int M, N, K;
    } shapes[] = {{"x W1 (T x f x h)", T, f, hidden}, {"r W2 (T x h x f)", T, hidden, f}};
    for (const auto& s : shapes) {
      const double t = tflops(h, ct, s.M, s.N, s.K, A, B, C);
      std::printf("%-8d %-8d %-34s %10.1f %9.0f%%\n", hidden, T, s.name, t, 100 * t / peak);
    }
  }
  cublasDestroy(h);
  return 0;
}
