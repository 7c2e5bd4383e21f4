#pragma once
// The CUDA part as a plugin: libcontend_cuda.so (beside the contend binary) holds the cuda backend
// and the nccl transport with cuBLAS, cudart and NCCL, and is loaded the first time a process
// uses one of them. Linking cuBLASLt costs every process about 210 MB of memory and 0.1 s at
// start, measured here (a flow generator, a refused input, `contend list`); now only a process that
// runs a GPU stage pays it. The contend binary registers "cuda" and "nccl" at startup with their
// entries (entries.h), whose factories load the plugin and call through its table.
// Thread-safe: loading happens once, under a lock.

#include <cstddef>
#include <memory>
#include <string>

#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/transport/transport.h"
#include "contend/pipeline_cuda/device_info.h"

namespace contend::pipeline_cuda {

// What the plugin exports (its one symbol, `contend_cuda_plugin`, returns it). Plain function
// pointers over this build's own types: the plugin and the binary come from one build.
struct CudaPlugin {
  int abi = 0;  // kPluginAbi of the build that made the plugin
  Result<std::unique_ptr<pipeline::ComputeBackend>> (*make_backend)(const Spec& spec,
                                                                    const pipeline::BackendContext& context,
                                                                    int rank) = nullptr;
  // nullptr when the plugin was built without NCCL.
  Result<std::unique_ptr<pipeline::Transport>> (*connect_nccl)(std::unique_ptr<pipeline::Transport> bootstrap, int rank,
                                                               int world_size, std::size_t message_floats) = nullptr;
  DeviceInfo (*device_info)() = nullptr;  // runtime, driver, GPUs, NCCL (device_info.h)
};

// Bumped whenever CudaPlugin or the types it passes change.
inline constexpr int kPluginAbi = 2;
inline constexpr const char* kPluginSymbol = "contend_cuda_plugin";
inline constexpr const char* kPluginFile = "libcontend_cuda.so";

// The plugin, loaded from the folder of this process's executable on first use. kUnsupported
// naming the file and the loader's message when it cannot be loaded.
Result<const CudaPlugin*> cuda_plugin();

// Registers "cuda" (and "nccl" when `with_nccl`) with the pipeline's tables, their factories
// loading the plugin on first use; whether a device is there is asked of the driver (libcuda)
// without loading it. Call at startup.
void register_cuda_plugin(bool with_nccl);

}  // namespace contend::pipeline_cuda
