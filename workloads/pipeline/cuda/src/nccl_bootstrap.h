#pragma once
// Private: how the ranks of the nccl transport agree on their communicators, over the TCP
// transport they were bootstrapped over (nccl_transport.h). To each neighbour, each rank sends its
// GPU's UUID, a hash of its NCCL_HOSTID and the unique id of the communicator it sends on, and
// receives the neighbour's, whose id is that of the communicator it receives on. Neighbours on one
// GPU of one host are refused here, with a message saying what to do: NCCL would refuse them too,
// without saying why. Private to workloads/pipeline/cuda.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <map>

#include "contend/common/result.h"
#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline_cuda::detail {

inline constexpr std::size_t kUuidBytes = 16;

// This rank's GPU, as the bootstrap shows it to the neighbours.
struct LocalGpu {
  int device = 0;
  cudaDeviceProp prop{};             // its name, for the error when a neighbour shares it
  unsigned char uuid[kUuidBytes]{};  // NCCL tells GPUs apart by it
  std::uint64_t host_id = 0;         // FNV-1a of NCCL_HOSTID
};

// This rank's communicators by neighbour: it is rank 0 of those it sends on, 1 of those it
// receives on.
struct NcclIds {
  std::map<int, ncclUniqueId> send;
  std::map<int, ncclUniqueId> recv;
};

// `dev`'s properties, UUID and this host's id. Call with `dev` current. kIo naming the call on
// failure.
Result<LocalGpu> identify_gpu(int dev);

// The ids of the communicators between `rank` and its neighbours (rank - 1 and rank + 1 within
// `world_size`), exchanged over `bootstrap`. kUnsupported when a neighbour shares this GPU and
// host; kIo for a malformed message or a failed NCCL call; the bootstrap's error (kTimeout when a
// neighbour's message does not come) otherwise.
Result<NcclIds> exchange_ids(pipeline::Transport& bootstrap, int rank, int world_size, const LocalGpu& gpu);

}  // namespace contend::pipeline_cuda::detail
