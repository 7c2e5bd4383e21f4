// Stage GEMM throughput against the GPU's peak (issue 8's goal: 70%+ on an H200 at hidden 4096+).
//  - The shapes are the cuda backend's forward GEMMs for T = 4096 tokens at hidden h and ffn 4h:
//    x W1 (T x 4h x h) and r W2 (T x h x 4h), in the backend's three math modes (fp32 storage,
//    cuBLAS compute type fp32, TF32 or BF16), as cublasGemmEx runs them in the backend.
//  - The operands hold RANDOM values, uniform in [-1, 1): tensor cores draw less power on zeros
//    and run faster (on an H200, 894 TFLOP/s bf16 on zeros against 788 on random data), so a
//    zero-filled benchmark overstates what training reaches.
//  - Each figure is a fraction of the H200's peak for its math mode: 790 TFLOP/s dense bf16 (what
//    an 8192^3 bf16 product reaches on random data there; the datasheet says 990), 495 TF32 dense
//    (datasheet), 67 fp32 (datasheet). A native bf16-storage 8192^3 product is measured as well,
//    as the ceiling the fp32-storage modes convert down to.
//  - Every CUDA and cuBLAS call is checked; a failure exits 1 naming it. Without a device: exit 77.
// Prints a table and `figure NAME VALUE` lines (bench/gpu_device_check.sh collects them).
// Run: build/cuda/bin/contend_bench_gpu_gemm [--hidden 4096,8192] [--math fp32,tf32,bf16]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "contend/pipeline_cuda/launch_geometry.h"

namespace {

using contend::pipeline_cuda::grid_blocks;
using contend::pipeline_cuda::kThreads;

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_gemm_bench:%d: %s: %s\n", line, what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(cublasStatus_t s, const char* what, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gpu_gemm_bench:%d: %s: %s\n", line, what, cublasGetStatusString(s));
    std::exit(1);
  }
}
#define CHECK(expr) check((expr), #expr, __LINE__)

// splitmix64 of (seed, i) -> uniform in [-1, 1): independent values without per-thread state.
__device__ float uniform(unsigned long long seed, std::size_t i) {
  unsigned long long z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}
__global__ void fill_f32(float* x, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] = uniform(seed, i);
  }
}
__global__ void fill_bf16(__nv_bfloat16* x, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] = __float2bfloat16(uniform(seed, i));
  }
}

struct Mode {
  const char* name;
  cublasComputeType_t compute;
  double peak_tflops;  // the H200's, dense
};
constexpr Mode kModes[] = {{"fp32", CUBLAS_COMPUTE_32F, 67.0},
                           {"tf32", CUBLAS_COMPUTE_32F_FAST_TF32, 495.0},
                           {"bf16", CUBLAS_COMPUTE_32F_FAST_16BF, 790.0}};

// Mean TFLOP/s of `reps` row-major C[M x N] = A[M x K] B[K x N] after 3 warm-ups, timed by events.
double tflops(cublasHandle_t h, cublasComputeType_t ct, cudaDataType_t type, int M, int N, int K, const void* A,
              const void* B, void* C, int reps) {
  const float one = 1.0f, zero = 0.0f;
  const auto run = [&] {
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, type, N, A, type, K, &zero, C, type, N, ct,
                       CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 3; ++i) {
    run();
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) {
    run();
  }
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return 2.0 * M * N * K * reps / (ms * 1e-3) / 1e12;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) {
      break;
    }
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> hiddens{"4096", "8192"}, maths{"fp32", "tf32", "bf16"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--hidden") {
      hiddens = split(argv[i + 1]);
    } else if (flag == "--math") {
      maths = split(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: %s [--hidden 4096,8192] [--math fp32,tf32,bf16]\n", argv[0]);
      return 2;
    }
  }
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none visible");
    return 77;
  }
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  constexpr int kTokens = 4096;
  int max_hidden = 0;
  for (const std::string& s : hiddens) {
    max_hidden = std::max(max_hidden, std::atoi(s.c_str()));
  }
  if (max_hidden <= 0) {
    std::fprintf(stderr, "--hidden: expected positive widths\n");
    return 2;
  }
  // Every operand of every shape fits in (4h x h) or (T x 4h) floats; the 8192^3 reference too.
  const std::size_t floats = std::max({static_cast<std::size_t>(4) * max_hidden * max_hidden,
                                       static_cast<std::size_t>(kTokens) * 4 * max_hidden, std::size_t{8192} * 8192});
  float *A, *B, *C;
  CHECK(cudaMalloc(&A, floats * sizeof(float)));
  CHECK(cudaMalloc(&B, floats * sizeof(float)));
  CHECK(cudaMalloc(&C, floats * sizeof(float)));
  fill_f32<<<grid_blocks(floats), kThreads>>>(A, floats, 1);
  CHECK(cudaGetLastError());
  fill_f32<<<grid_blocks(floats), kThreads>>>(B, floats, 2);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("%s, %d SMs; operands uniform in [-1, 1); T = %d tokens, ffn 4h\n", p.name, p.multiProcessorCount,
              kTokens);
  std::printf("%-5s %-7s %-18s %10s %12s\n", "math", "hidden", "gemm (M x N x K)", "TFLOP/s", "of H200 peak");
  for (const std::string& math : maths) {
    const Mode* mode = nullptr;
    for (const Mode& m : kModes) {
      mode = math == m.name ? &m : mode;
    }
    if (mode == nullptr) {
      std::fprintf(stderr, "--math: expected fp32, tf32 or bf16, got \"%s\"\n", math.c_str());
      return 2;
    }
    for (const std::string& hs : hiddens) {
      const int hidden = std::atoi(hs.c_str());
      const struct {
        const char* name;
        const char* key;
        int M, N, K;
      } shapes[] = {{"x W1 (T x 4h x h)", "xw1", kTokens, 4 * hidden, hidden},
                    {"r W2 (T x h x 4h)", "rw2", kTokens, hidden, 4 * hidden}};
      for (const auto& s : shapes) {
        const int reps = std::string(mode->name) == "fp32" ? 5 : 20;
        const double t = tflops(h, mode->compute, CUDA_R_32F, s.M, s.N, s.K, A, B, C, reps);
        const double frac = t / mode->peak_tflops;
        std::printf("%-5s %-7d %-18s %10.1f %11.0f%%\n", mode->name, hidden, s.name, t, 100 * frac);
        std::printf("figure gemm.%s.h%d.%s.tflops %.1f\n", mode->name, hidden, s.key, t);
        std::printf("figure gemm.%s.h%d.%s.of_peak %.3f\n", mode->name, hidden, s.key, frac);
      }
    }
  }
  // The ceiling the fp32-storage bf16 mode converts down to: bf16 storage, 8192^3.
  auto* a16 = reinterpret_cast<__nv_bfloat16*>(A);
  auto* b16 = reinterpret_cast<__nv_bfloat16*>(B);
  const std::size_t n16 = std::size_t{8192} * 8192;
  fill_bf16<<<grid_blocks(n16), kThreads>>>(a16, n16, 3);
  CHECK(cudaGetLastError());
  fill_bf16<<<grid_blocks(n16), kThreads>>>(b16, n16, 4);
  CHECK(cudaGetLastError());
  const double native = tflops(h, CUBLAS_COMPUTE_32F, CUDA_R_16BF, 8192, 8192, 8192, a16, b16, C, 20);
  std::printf("bf16 storage, 8192^3: %.1f TFLOP/s, %.0f%% of 790\n", native, 100 * native / 790.0);
  std::printf("figure gemm.bf16_storage.8192.tflops %.1f\n", native);
  std::printf("figure gemm.bf16_storage.8192.of_peak %.3f\n", native / 790.0);
  CHECK(cudaFree(A));
  CHECK(cudaFree(B));
  CHECK(cudaFree(C));
  CHECK(cublasDestroy(h));
  return 0;
}
