#include "contend/pipeline/transport/nccl_isolation.h"

namespace contend::pipeline {

std::vector<std::string> nccl_isolation_environment(const std::string& host_id) {
  return {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_IB_DISABLE=1", "NCCL_HOSTID=" + host_id};
}

}  // namespace contend::pipeline
