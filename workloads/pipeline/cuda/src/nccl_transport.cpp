#include "contend/pipeline_cuda/nccl_transport.h"

#include "contend/pipeline_cuda/entries.h"

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <utility>

#include "cuda_check.h"
#include "nccl_bootstrap.h"
#include "nccl_transport_impl.h"

namespace contend::pipeline_cuda {
namespace {

using pipeline::Transport;

// The GPU of `rank` (`device` -1: rank % visible devices), made current on this thread.
Result<int> pick_device(int rank, int device) {
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    return make_error(Errc::kUnsupported, std::string("the nccl transport needs a CUDA device: ") +
                                              (e != cudaSuccess ? cudaGetErrorString(e) : "none visible"));
  }
  const int dev = device >= 0 ? device : rank % count;
  CUDA_TRY(cudaSetDevice(dev));
  return dev;
}

}  // namespace

Result<std::unique_ptr<Transport>> connect_nccl(std::unique_ptr<Transport> bootstrap, int rank, int world_size,
                                                std::size_t message_floats, int device) {
  if (message_floats == 0) {
    return make_error(Errc::kInvalidArgument, "the nccl transport needs the size of the tensors it will carry");
  }
  auto dev = pick_device(rank, device);
  if (!dev) {
    return dev.error();
  }
  auto gpu = detail::identify_gpu(*dev);
  if (!gpu) {
    return gpu.error();
  }
  auto ids = detail::exchange_ids(*bootstrap, rank, world_size, *gpu);
  if (!ids) {
    return ids.error();
  }
  auto transport = std::make_unique<detail::NcclTransport>(std::move(bootstrap), *dev, message_floats);
  if (auto ok = transport->start(ids->send, ids->recv); !ok) {
    return ok.error();
  }
  return std::unique_ptr<Transport>(std::move(transport));
}

void register_nccl_transport() {
  pipeline::transports().add(nccl_transport_entry(),
                             pipeline::TransportKind{.needs_device = true,
                                                     .sent_when_delivered = true,
                                                     .make =
                                                         [](const Spec&, std::unique_ptr<Transport> bootstrap, int rank,
                                                            int world_size, std::size_t message_floats) {
                                                           return connect_nccl(std::move(bootstrap), rank, world_size,
                                                                               message_floats);
                                                         },
                                                     .environment = nccl_environment});
}

}  // namespace contend::pipeline_cuda
