#pragma once
// What the CUDA build sees on this machine, for `contend --version` and results' env.json.
// Thread-safe. describe() is pure (entries.cpp); device_info() asks the runtime.

#include <string>

namespace contend::pipeline_cuda {

struct DeviceInfo {
  int runtime_version = 0;  // e.g. 13000
  int driver_version = 0;   // 0: no driver
  int devices = 0;
  std::string gpu;       // the first device's name, "" without one
  int nccl_version = 0;  // the NCCL library linked; 0: none found
  std::string error;     // why there is no device, when there is none
};

// Asks the CUDA runtime (and NCCL): needs the toolkit's libraries (the plugin, plugin.h).
DeviceInfo device_info();
// One line: "CUDA runtime 13.0, driver 13.0, 1 x NVIDIA H200, NCCL 2.27.3" or "... no GPU (reason)".
std::string describe(const DeviceInfo& info);

}  // namespace contend::pipeline_cuda
