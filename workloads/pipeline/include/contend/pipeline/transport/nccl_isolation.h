#pragma once
// What keeps NCCL's traffic on the emulated links when its ranks share a machine (namespaces of
// one host): NCCL would otherwise reach a rank in another namespace of the same host by GPU P2P,
// shared memory or InfiniBand, none of which crosses a shaped link. contend's nccl transport sets
// it for its workers and the runner for a user's command job. Pure.

#include <string>
#include <vector>

namespace contend::pipeline {

// NCCL_P2P_DISABLE, NCCL_SHM_DISABLE and NCCL_IB_DISABLE set, and NCCL_HOSTID = `host_id`, so
// NCCL treats each namespace as a host apart ("KEY=VALUE" items).
std::vector<std::string> nccl_isolation_environment(const std::string& host_id);

}  // namespace contend::pipeline
