// The one symbol libcontend_cuda.so exports: its table of entry points (plugin.h).
#include "contend/pipeline_cuda/plugin.h"
#include "contend/pipeline_cuda/cuda_backend.h"
#include "contend/pipeline_cuda/device_info.h"
#if CONTEND_FOUND_NCCL
#include "contend/pipeline_cuda/nccl_transport.h"
#endif

namespace contend::pipeline_cuda {
namespace {

const CudaPlugin kPlugin = [] {
  CudaPlugin p;
  p.abi = kPluginAbi;
  p.make_backend = make_cuda_backend;
#if CONTEND_FOUND_NCCL
  p.connect_nccl = [](std::unique_ptr<pipeline::Transport> bootstrap, int rank, int world_size,
                      std::size_t message_floats) {
    return connect_nccl(std::move(bootstrap), rank, world_size, message_floats);
  };
#endif
  p.device_info = device_info;
  return p;
}();

}  // namespace
}  // namespace contend::pipeline_cuda

extern "C" __attribute__((visibility("default"))) const contend::pipeline_cuda::CudaPlugin* contend_cuda_plugin() {
  return &contend::pipeline_cuda::kPlugin;
}
