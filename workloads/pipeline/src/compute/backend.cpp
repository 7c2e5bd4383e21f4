#include "contend/pipeline/compute/backend.h"

namespace contend::pipeline {
namespace {

Result<std::unique_ptr<ComputeBackend>> make_cpu(const Spec&, const BackendContext& c, int stage) {
  return make_cpu_backend(c.model, stage, c.num_stages, c.microbatches);
}

Result<std::unique_ptr<ComputeBackend>> make_emulated(const Spec&, const BackendContext& c, int stage) {
  EmulatedCompute e = c.emulated;
  if (c.profile) {
    const auto [fwd, bwd] = profile_cpu_backend(c.model, stage, c.num_stages, 5);
    e.forward = fwd;
    e.backward = bwd;
    e.activation_bytes = c.model.activation_floats() * sizeof(float);
  }
  return make_emulated_backend(e, stage, c.num_stages);
}

}  // namespace

// One line per built-in backend.
Registry<BackendKind>& backends() {
  static Registry<BackendKind> table(
      "backend",
      {
          {{"", "cpu", "the real model on this CPU (OpenBLAS), gradients checked against one process", {}},
           BackendKind{.uses_model = true, .make = make_cpu}},
          {{"", "emulated", "each forward and backward takes a given (or profiled) time and moves a given tensor", {}},
           BackendKind{.make = make_emulated}},
      });
  return table;
}

Result<std::unique_ptr<ComputeBackend>> make_backend(const Spec& spec, const BackendContext& context, int stage) {
  const auto* item = backends().find(spec);
  CONTEND_CHECK(item != nullptr, "make_backend: \"" + spec.str() + "\" is not a backend spec");
  return item->kind.make(spec, context, stage);
}

}  // namespace contend::pipeline
