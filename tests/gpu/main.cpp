// The [gpu] tests: they need a CUDA device. Without one the executable prints why and exits 77,
// which ctest reports as skipped. `--need-gpus N` (first argument) asks for N devices the same way
// (the [gpu2] tests: NCCL between two GPUs).
#include <cuda_runtime.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "catch/session.h"

int main(int argc, char** argv) {
  int need = 1;
  if (argc >= 3 && std::strcmp(argv[1], "--need-gpus") == 0) {
    need = std::atoi(argv[2]);
    argv[2] = argv[0];  // Catch sees the rest
    argc -= 2;
    argv += 2;
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count < need) {
    // "no CUDA device" first: bench/gpu_device_check.sh reports the SKIP with this line.
    std::printf("SKIP: no CUDA device%s: needs %d, %d here%s%s%s\n", need > 1 && count > 0 ? " enough" : "", need,
                e != cudaSuccess ? 0 : count, e != cudaSuccess ? " (" : "",
                e != cudaSuccess ? cudaGetErrorString(e) : "", e != cudaSuccess ? ")" : "");
    return 77;
  }
  return contend::test::run_catch(argc, argv);
}
