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

}  // namespace contend::pipeline_cuda
