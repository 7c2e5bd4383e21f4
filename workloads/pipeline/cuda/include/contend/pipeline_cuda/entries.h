#pragma once
// What the registries know of the CUDA part without loading it (plugin.h): the entries of the
// cuda backend and the nccl transport, and the environment NCCL needs on a node. Pure; built
// wherever the toolkit is, used by both the plugin's registration and the lazy one.

#include <string>
#include <vector>

#include "contend/common/spec.h"

namespace contend::pipeline_cuda {

// "cuda[:math=fp32|tf32|bf16]".
SpecEntry cuda_backend_entry();
// "nccl".
SpecEntry nccl_transport_entry();

// What NCCL needs on a node whose link interfaces are `ifnames` in namespace (or host) `host_id`:
// its sockets on exactly those interfaces (the topology routes every neighbour's addresses through
// the shaped link), then pipeline::nccl_isolation_environment: no P2P, shared-memory or InfiniBand
// paths around the links, and a host id of its own, so NCCL treats namespaces as hosts apart (and
// stages that share a GPU are allowed).
std::vector<std::string> nccl_environment(const std::vector<std::string>& ifnames, const std::string& host_id);

}  // namespace contend::pipeline_cuda
