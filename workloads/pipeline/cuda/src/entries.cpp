#include "contend/pipeline_cuda/entries.h"

#include "contend/pipeline/transport/nccl_isolation.h"
#include "contend/pipeline/transport/transport.h"
#include "contend/pipeline_cuda/device_info.h"

namespace contend::pipeline_cuda {

SpecEntry cuda_backend_entry() {
  return {"backend",
          "cuda",
          "the model on a GPU: cuBLAS GEMMs and kernels, one device arena per stage",
          {ParamDef::choice("math", "GEMM math: cuBLAS compute type (storage stays fp32)", "fp32",
                            {"fp32", "tf32", "bf16"})}};
}

SpecEntry nccl_transport_entry() {
  return {"transport", "nccl", "ncclSend/Recv on each rank's GPU, bootstrapped over TCP (control messages stay on TCP)",
          pipeline::send_params()};
}

std::vector<std::string> nccl_environment(const std::vector<std::string>& ifnames, const std::string& host_id) {
  std::string list;
  for (const auto& name : ifnames) {
    list += (list.empty() ? "=" : ",") + name;  // "==c0-n1": exact names, not prefixes
  }
  std::vector<std::string> out = {"NCCL_SOCKET_IFNAME=" + list};
  for (std::string& e : pipeline::nccl_isolation_environment(host_id)) {
    out.push_back(std::move(e));
  }
  return out;
}

std::string describe(const DeviceInfo& d) {
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::string out = "CUDA runtime " + version(d.runtime_version) + ", driver " +
                    (d.driver_version > 0 ? version(d.driver_version) : std::string("none"));
  out += d.devices > 0 ? ", " + std::to_string(d.devices) + " x " + d.gpu : ", no GPU (" + d.error + ")";
  if (d.nccl_version > 0) {
    const int v = d.nccl_version;
    out +=
        ", NCCL " + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
  }
  return out;
}

}  // namespace contend::pipeline_cuda
