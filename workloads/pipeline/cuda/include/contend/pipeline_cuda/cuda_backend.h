#pragma once
// The `cuda` compute backend: the cpu backend's residual MLP blocks on a GPU. cuBLAS GEMMs (fp32,
// or TF32 / BF16 tensor-core math, selectable), kernels for the bias, ReLU and its gradient, the
// loss and the optimizer (SGD, Adam); a compute stream per stage and separate streams for the
// host-to-device and device-to-host copies; every device buffer carved at start from one
// allocation sized for the stage's parameters, gradients, optimizer state, scratch and the stash
// of every micro-batch that can be in flight, so the peak is known before the first step.
// Tensors cross the ComputeBackend interface in host memory (host-staged transports): inputs
// through a pinned staging buffer without the host waiting for the copy; each output copied on
// the compute stream into one of 2m device slots and from there to pinned memory on a copy stream
// while the next action computes, the tensor filled in by its completion (take_completion),
// which the transport runs on its sending thread just before the socket takes it.
// Built only with CONTEND_WITH_CUDA (workloads/pipeline/cuda). Not thread-safe: one compute thread
// per stage.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/compute/model.h"

namespace contend::pipeline_cuda {

struct CudaOptions {
  std::string math = "fp32";  // fp32, tf32 or bf16 (cuBLAS compute type; storage stays fp32)
  int device = -1;            // -1: rank % visible devices (several stages may share a GPU)
};

// The stage `stage` of `num_stages` on the GPU. kUnsupported naming the reason when there is no
// usable device; kInvalidArgument for an unknown math mode; kIo when the arena cannot be
// allocated (naming its size). Requires validate_model() to pass.
Result<std::unique_ptr<pipeline::ComputeBackend>> make_cuda_backend(const pipeline::ModelConfig& model, int stage,
                                                                    int num_stages, int microbatches,
                                                                    const CudaOptions& options);

// For tests: the backend's parameters or gradients of local layer i copied to the host, in the
// cpu backend's order W1, b1, W2, b2; empty when `backend` is not a cuda backend.
std::vector<std::vector<float>> cuda_params(const pipeline::ComputeBackend& backend, int layer);
std::vector<std::vector<float>> cuda_grads(const pipeline::ComputeBackend& backend, int layer);
// Bytes of the device arena (the stage's peak device memory).
std::uint64_t cuda_arena_bytes(const pipeline::ComputeBackend& backend);

// The backend a "cuda" spec (entries.h) names, for `rank`: the registry's factory.
Result<std::unique_ptr<pipeline::ComputeBackend>> make_cuda_backend(const Spec& spec,
                                                                    const pipeline::BackendContext& context, int rank);
// kUnsupported saying why when no CUDA device is visible.
Result<void> cuda_device_available();

// Registers "cuda" with the pipeline's backend table, linked in (the gpu tests; the contend binary
// registers it lazily through the plugin: plugin.h).
void register_cuda_backend();

}  // namespace contend::pipeline_cuda
