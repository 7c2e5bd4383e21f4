#include "nccl_bootstrap.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "contend/common/fnv.h"
#include "cuda_check.h"
#include "nccl_channel.h"

namespace contend::pipeline_cuda::detail {
namespace {

using pipeline::Kind;
using pipeline::Tag;
using pipeline::Transport;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kHostIdBytes = 8;
// The bootstrap message: GPU UUID, hash of NCCL_HOSTID, the unique id.
constexpr std::size_t kBootstrapBytes = kUuidBytes + kHostIdBytes + sizeof(ncclUniqueId);
constexpr std::size_t kBootstrapFloats = (kBootstrapBytes + sizeof(float) - 1) / sizeof(float);
constexpr auto kBootstrapTimeout = std::chrono::seconds(60);

// FNV-1a of NCCL_HOSTID ("" when unset): NCCL tells hosts apart by it, and refuses two ranks on
// one GPU only within one host.
std::uint64_t host_id_hash() {
  const char* id = std::getenv("NCCL_HOSTID");
  return fnv1a(id != nullptr ? id : "");
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

// The message to one neighbour: this GPU's UUID, this host's id, the id of the communicator this
// rank sends to it on.
std::vector<float> bootstrap_message(const LocalGpu& gpu, const ncclUniqueId& id) {
  std::vector<float> msg(kBootstrapFloats, 0.0f);
  auto* bytes = reinterpret_cast<unsigned char*>(msg.data());
  std::memcpy(bytes, gpu.uuid, kUuidBytes);
  std::memcpy(bytes + kUuidBytes, &gpu.host_id, kHostIdBytes);
  std::memcpy(bytes + kUuidBytes + kHostIdBytes, &id, sizeof(ncclUniqueId));
  return msg;
}

// Bootstrap: to each neighbour, this GPU's UUID and the id of the communicator this rank sends on.
Result<void> send_own_ids(Transport& bootstrap, int rank, int world_size, const LocalGpu& gpu, const Tag& tag,
                          std::map<int, ncclUniqueId>& send_ids) {
  for (int peer : {rank - 1, rank + 1}) {
    if (peer < 0 || peer >= world_size) {
      continue;
    }
    NCCL_TRY(ncclGetUniqueId(&send_ids[peer]));
    if (auto ok = bootstrap.send(peer, tag, bootstrap_message(gpu, send_ids[peer])); !ok) {
      return ok.error();
    }
  }
  return {};
}

Error same_gpu_error(int rank, int peer, const LocalGpu& gpu) {
  return make_error(Errc::kUnsupported,
                    "ranks " + std::to_string(rank) + " and " + std::to_string(peer) + " are both on GPU " +
                        std::to_string(gpu.device) + " (" + gpu.prop.name + ", UUID " + hex(gpu.uuid, kUuidBytes) +
                        ") of one host: NCCL refuses two ranks of a communicator on one GPU; give each rank "
                        "its own GPU (CUDA_VISIBLE_DEVICES), or its own NCCL_HOSTID so NCCL treats them as "
                        "hosts apart and connects them through sockets (contend run does, per namespace), or "
                        "use the tcp transport");
}

// From each neighbour this rank sent to, the id of the communicator it receives on.
Result<void> recv_peer_ids(Transport& bootstrap, int rank, const LocalGpu& gpu, const Tag& tag,
                           const std::map<int, ncclUniqueId>& send_ids, std::map<int, ncclUniqueId>& recv_ids) {
  for (const auto& [peer, unused] : send_ids) {
    auto got = bootstrap.recv(peer, tag, Clock::now() + kBootstrapTimeout);
    if (!got) {
      return got.error();
    }
    if (got->size() != kBootstrapFloats) {
      return make_error(Errc::kIo, "rank " + std::to_string(peer) + " sent a bootstrap message of " +
                                       std::to_string(got->size()) + " floats, not " +
                                       std::to_string(kBootstrapFloats) + ": is it running the nccl transport?");
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(got->data());
    std::uint64_t peer_host_id = 0;
    std::memcpy(&peer_host_id, bytes + kUuidBytes, kHostIdBytes);
    if (std::memcmp(bytes, gpu.uuid, kUuidBytes) == 0 && peer_host_id == gpu.host_id) {
      return same_gpu_error(rank, peer, gpu);
    }
    std::memcpy(&recv_ids[peer], bytes + kUuidBytes + kHostIdBytes, sizeof(ncclUniqueId));
  }
  return {};
}

}  // namespace

Result<LocalGpu> identify_gpu(int dev) {
  LocalGpu gpu;
  gpu.device = dev;
  cudaDeviceProp& prop = gpu.prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  std::memcpy(gpu.uuid, prop.uuid.bytes, kUuidBytes);
  gpu.host_id = host_id_hash();
  return gpu;
}

Result<NcclIds> exchange_ids(Transport& bootstrap, int rank, int world_size, const LocalGpu& gpu) {
  NcclIds ids;
  const Tag tag{Kind::kControl, pipeline::kBootstrapIteration, 0, 0};
  if (auto ok = send_own_ids(bootstrap, rank, world_size, gpu, tag, ids.send); !ok) {
    return ok.error();
  }
  if (auto ok = recv_peer_ids(bootstrap, rank, gpu, tag, ids.send, ids.recv); !ok) {
    return ok.error();
  }
  return ids;
}

}  // namespace contend::pipeline_cuda::detail
