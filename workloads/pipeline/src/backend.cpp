#include "contend/pipeline/backend.h"

namespace contend::pipeline {
namespace {

Result<std::unique_ptr<ComputeBackend>> make_cpu(const Spec&, const BackendContext& c, int rank) {
  return make_cpu_backend(c.model, rank, c.world_size, c.microbatches);
}

Result<std::unique_ptr<ComputeBackend>> make_emulated(const Spec&, const BackendContext& c, int rank) {
  EmulatedCompute e = c.emulated;
  if (c.profile) {
    const auto [fwd, bwd] = profile_cpu_backend(c.model, rank, c.world_size, 5);
    e.forward = fwd;
    e.backward = bwd;
    e.activation_bytes = c.model.activation_floats() * sizeof(float);
  }
  return make_emulated_backend(e, rank, c.world_size);
}

}  // namespace

// One line per built-in backend.
Registry<BackendKind>& backends() {
  static Registry<BackendKind> table("backend", {
      {{"", "cpu", "the real model on this CPU (OpenBLAS), gradients checked against one process", {}},
       {true, false, make_cpu, nullptr}},
      {{"", "emulated", "each forward and backward takes a given (or profiled) time and moves a given tensor", {}},
       {false, false, make_emulated, nullptr}},
  });
  return table;
}

Result<std::unique_ptr<ComputeBackend>> make_backend(const Spec& spec, const BackendContext& context, int rank) {
  const auto* item = backends().find(spec);
  CONTEND_CHECK(item != nullptr, "make_backend: \"" + spec.str() + "\" is not a backend spec");
  return item->kind.make(spec, context, rank);
}

}  // namespace contend::pipeline
