#include "contend/pipeline_cuda/device_info.h"

#include <cuda_runtime.h>

#if CONTEND_FOUND_NCCL
#include <nccl.h>
#endif

namespace contend::pipeline_cuda {

DeviceInfo device_info() {
  DeviceInfo d;
  cudaRuntimeGetVersion(&d.runtime_version);
  cudaDriverGetVersion(&d.driver_version);
  if (auto e = cudaGetDeviceCount(&d.devices); e != cudaSuccess) {
    d.devices = 0;
    d.error = cudaGetErrorString(e);
  } else if (d.devices > 0) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
      d.gpu = p.name;
    }
  } else {
    d.error = "no device visible";
  }
#if CONTEND_FOUND_NCCL
  ncclGetVersion(&d.nccl_version);
#endif
  return d;
}

std::string describe(const DeviceInfo& d) {
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::string out = "CUDA runtime " + version(d.runtime_version) + ", driver " +
                    (d.driver_version > 0 ? version(d.driver_version) : std::string("none"));
  out += d.devices > 0 ? ", " + std::to_string(d.devices) + " x " + d.gpu : ", no GPU (" + d.error + ")";
  if (d.nccl_version > 0) {
    const int v = d.nccl_version;
    out +=
        ", NCCL " + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
  }
  return out;
}

}  // namespace contend::pipeline_cuda
