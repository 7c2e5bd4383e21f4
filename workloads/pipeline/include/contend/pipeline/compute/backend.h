#pragma once
// Compute backends: what one stage does for a forward, a backward and an optimizer step, behind
// one interface so the executor, transports and metrics are written once.
//  - cpu: the real model (model.h) with OpenBLAS sgemm; the first stage makes the synthetic
//    input, the last computes the loss;
//  - emulated: each forward/backward takes a given duration (a sleep whose last 100 us are spun,
//    or all spun) and moves a tensor of a given size, so 8 or 16 stages fit on 2 cores.
// Further backends (cuda) plug in through backends(). Not thread-safe: one compute thread per stage.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contend/common/registry.h"
#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/pipeline/compute/model.h"
#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline {

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  // Floats in each activation (and gradient) sent between stages.
  virtual std::size_t message_floats() const = 0;
  // `in` is the received activation (ignored on the first stage); `out` receives the activation
  // to send (unused on the last stage). Both have message_floats() elements.
  virtual void forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& out) = 0;
  // `grad_out` is the received gradient (ignored on the last stage); `grad_in` receives the
  // gradient to send back (unused on the first stage).
  virtual void backward(int iteration, int mb, const std::vector<float>& grad_out, std::vector<float>& grad_in) = 0;
  // The backward split as zero-bubble schedules run it: backward_input computes only `grad_in`
  // (what goes back) and keeps what the weight gradients need; backward_weight computes those and
  // releases the micro-batch's stash. Together they accumulate what backward() does. Defaults, for
  // a backend that does not split: the whole backward() at I, nothing at W (the same numbers; the
  // time all at I).
  virtual void backward_input(int iteration, int mb, const std::vector<float>& grad_out, std::vector<float>& grad_in) {
    backward(iteration, mb, grad_out, grad_in);
  }
  virtual void backward_weight(int iteration, int mb) {
    (void)iteration;
    (void)mb;
  }
  // Optimizer step at the end of an iteration.
  virtual void step() = 0;
  // Last stage: the mean loss of the micro-batches since the last step; NaN elsewhere.
  virtual double loss() const = 0;
  // Activation bytes held now (forwards whose backward has not run).
  virtual std::uint64_t held_bytes() const = 0;
  // The completion of the tensor the last forward or backward wrote (`out`, `grad_in`) when it
  // is still being produced (cuda: its device-to-host copy runs on a copy stream while the next
  // action computes); empty when the tensor is complete. The executor hands it to the transport
  // with the tensor (Transport::send). Dropping it unrun releases what it holds.
  virtual Completion take_completion() { return {}; }
};

// The largest tensor an emulated stage sends: buffers of it are held per in-flight micro-batch.
inline constexpr std::uint64_t kMaxActivationBytes = 1ull << 30;

struct EmulatedCompute {
  std::chrono::nanoseconds forward{0};
  std::chrono::nanoseconds backward{0};
  std::uint64_t activation_bytes = 4096;  // tensor sent per micro-batch, each way
  bool spin = false;                      // busy-wait instead of sleeping (precise, burns a core)
  double weight_fraction = 0.5;           // a split backward: W takes this share of it, I the rest
};

// The real model's stage `stage` of `num_stages`, `microbatches` per iteration. Requires
// validate_model() to pass. Sets OpenBLAS to one thread (one worker per core).
std::unique_ptr<ComputeBackend> make_cpu_backend(const ModelConfig& model, int stage, int num_stages, int microbatches);
std::unique_ptr<ComputeBackend> make_emulated_backend(const EmulatedCompute& config, int stage, int num_stages);

// What a backend is made with: the parts of the run configuration backends read. A backend is
// one pipeline stage; a rank of an interleaved or V schedule holds several.
struct BackendContext {
  const ModelConfig& model;
  int num_stages = 1;  // the pipeline's stages (ranks x chunks per rank)
  int microbatches = 1;
  EmulatedCompute emulated;  // emulated
  bool profile = false;      // emulated: durations and sizes from profiling the cpu model
};

struct BackendKind {
  bool uses_model = false;    // runs (or profiles) the model: ModelConfig must be valid
  bool needs_device = false;  // runs on a device this host may lack (cuda): only it can time it
  std::function<Result<std::unique_ptr<ComputeBackend>>(const Spec& spec, const BackendContext& context, int stage)>
      make{};
  // Whether this host can run it (cuda: a device is there); unset: always. What a runner checks
  // before its first cell.
  std::function<Result<void>()> available{};
};

// The backends by name: cpu and emulated built in (one line each in backend.cpp); optional parts
// (cuda) add themselves at startup, before any run. Specs: "cpu", "emulated", "cuda:math=bf16".
Registry<BackendKind>& backends();

// The backend `spec` (from backends().parse) names, for pipeline stage `stage`.
Result<std::unique_ptr<ComputeBackend>> make_backend(const Spec& spec, const BackendContext& context, int stage);

// The model stage inside a cpu backend (for tests comparing weights); nullptr for other backends.
const MlpStage* cpu_stage(const ComputeBackend& backend);

// The mean forward and backward time of one micro-batch on `stage` of the cpu backend, measured
// over `repeats` runs: the durations an emulated run uses to stand in for the real model.
std::pair<std::chrono::nanoseconds, std::chrono::nanoseconds> profile_cpu_backend(const ModelConfig& model, int stage,
                                                                                  int num_stages, int repeats);

}  // namespace contend::pipeline
