// Host-device copy bandwidth: what the cuda backend's staging copies (tcp and nccl transports)
// can reach. 256 MiB each way from pinned memory (cudaMallocHost, what the backend and the nccl
// transport stage through) and, for contrast, from pageable memory (what a plain std::vector
// gives), each the mean of 10 copies after 2 warm-ups, timed by CUDA events. An H200 sits on PCIe
// Gen5 x16: about 64 GB/s each way in theory, typically 50-55 pinned.
// Every CUDA call is checked (exit 1 naming it); without a device: exit 77. Prints a table and
// `figure NAME VALUE` lines for bench/gpu_device_check.sh.
// Run: build/cuda/bin/contend_bench_gpu_copy [MiB]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_copy_bench:%d: %s: %s\n", line, what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CHECK(expr) check((expr), #expr, __LINE__)

// GB/s of `reps` copies of `bytes` from `src` to `dst`.
double gbps(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  constexpr int kReps = 10;
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaMemcpyAsync(dst, src, bytes, kind, nullptr));
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < kReps; ++i) {
    CHECK(cudaMemcpyAsync(dst, src, bytes, kind, nullptr));
  }
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return static_cast<double>(bytes) * kReps / (ms * 1e-3) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none visible");
    return 77;
  }
  if (mib == 0) {
    std::fprintf(stderr, "usage: %s [MiB > 0]\n", argv[0]);
    return 2;
  }
  const std::size_t bytes = mib << 20;
  void* dev = nullptr;
  void* pinned = nullptr;
  CHECK(cudaMalloc(&dev, bytes));
  CHECK(cudaMallocHost(&pinned, bytes));
  std::vector<char> pageable(bytes, 1);  // touched: no page faults inside the timing
  std::memset(pinned, 1, bytes);
  const double pinned_h2d = gbps(dev, pinned, bytes, cudaMemcpyHostToDevice);
  const double pinned_d2h = gbps(pinned, dev, bytes, cudaMemcpyDeviceToHost);
  const double pageable_h2d = gbps(dev, pageable.data(), bytes, cudaMemcpyHostToDevice);
  const double pageable_d2h = gbps(pageable.data(), dev, bytes, cudaMemcpyDeviceToHost);
  std::printf("%zu MiB per copy     %10s %10s\n", mib, "H2D GB/s", "D2H GB/s");
  std::printf("pinned (cudaMallocHost) %10.1f %10.1f\n", pinned_h2d, pinned_d2h);
  std::printf("pageable (std::vector)  %10.1f %10.1f\n", pageable_h2d, pageable_d2h);
  std::printf("figure copy.pinned.h2d_gbps %.1f\nfigure copy.pinned.d2h_gbps %.1f\n", pinned_h2d, pinned_d2h);
  std::printf("figure copy.pageable.h2d_gbps %.1f\nfigure copy.pageable.d2h_gbps %.1f\n", pageable_h2d, pageable_d2h);
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(dev));
  return 0;
}
