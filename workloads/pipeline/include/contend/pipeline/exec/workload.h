#pragma once
// What a pipeline run trains and for how long: the one description that an experiment's
// "workload" object, `contend run`, `contend worker` and the simulator share. It crosses a process
// boundary as the same JSON an experiment file holds (docs/experiment-format.md, "The file"):
// workload_json() writes every member, parse_workload() reads it back to the same struct, and
// each member is one row of one table (workload.cpp), read and written from it, so a new member is
// its field here, its row there and its line in the docs. Plain values; thread-safe.

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "contend/common/json_reader.h"
#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/compute/model.h"
#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline {

struct Workload {
  Workload();
  int stages = 4;            // one rank per stage
  int microbatches = 16;     // per iteration
  int iterations = 12;       // measured, after the warm-up
  int warmup = 2;            // iterations run first and left out of the throughput
  Spec backend;              // emulated (the default), cpu, or cuda where built
  Spec transport;            // tcp (the default), or nccl where built
  EmulatedCompute emulated;  // emulated stages: forward 10 ms, backward 20 ms, 1 MiB activations
  ModelConfig model;         // cpu and cuda stages; microbatch_size also counts an emulated one's samples

  // Every iteration a rank runs: the warm-up, then the measured ones.
  int runs() const { return warmup + iterations; }
  // Samples per iteration: micro-batches x sequences per micro-batch (docs/metrics.md).
  double samples_per_iteration() const { return static_cast<double>(microbatches) * model.microbatch_size; }
  // Whether the backend runs the model (cpu, cuda); else its stages are emulated.
  bool uses_model() const;

  // Equal in every member the codec carries (workload_json), not the runtime's others (spin,
  // the model's optimizer and seed...).
  friend bool operator==(const Workload&, const Workload&);
};

// An experiment's "workload" object (or what workload_json wrote), checked strictly: unknown keys,
// counts out of range, durations outside (0, 1 h], an activation over kMaxActivationBytes, an
// unknown backend or transport (named by its registry), a shape or a model that cannot run. Keys
// left out keep the defaults above. Errors name the file and the JSON pointer.
Result<Workload> parse_workload(const JsonReader& r);

// The same from JSON text (what `contend worker --workload` is given); `source` names it in errors.
Result<Workload> parse_workload_json(const std::string& text, const std::string& source);

// Every member, in the table's order, as parse_workload reads it: durations in ns and sizes in
// bytes, so the struct read back is equal to `w`.
nlohmann::ordered_json workload_json(const Workload& w);

// The members a stage's costs depend on, as workload_json writes them: the stages, backend and
// transport, and the emulated times and tensor or the model, whichever the backend runs; not how
// many micro-batches or iterations (what a calibration was measured for, and must match).
nlohmann::ordered_json stage_costs_json(const Workload& w);

// The keys of the workload object, in order (for docs and errors).
const std::vector<std::string>& workload_keys();

}  // namespace contend::pipeline
