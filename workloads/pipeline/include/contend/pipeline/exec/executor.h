#pragma once
// StageExecutor: runs one rank's lowered action list for an iteration on its compute thread:
// F, B, I and W on the backend of the action's stage (a rank of an interleaved or V schedule runs
// several stages, one backend each), SEND_* handed to the transport's sender thread, RECV_*
// waiting for what the receiver thread has (usually) read already, and a tensor between two
// stages of the same rank handed over locally. Holds only in-flight activations (the backends'
// stash) plus the messages between a receive and its use. Not thread-safe: one executor per rank,
// driven from one thread.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/policy/adaptive.h"
#include "contend/pipeline/transport/transport.h"
#include "contend/schedule/schedule.h"
#include "contend/sim/chrome_trace.h"
#include "contend/sim/simulator.h"

namespace contend::pipeline {

struct IterationMetrics {
  int rank = 0;
  int iteration = 0;
  double start_s = 0;      // steady clock, seconds (the same clock in every process of a host)
  double iteration_s = 0;  // first action to the end of the optimizer step
  double compute_s = 0;    // forwards, backwards and the step
  double send_wait_s = 0;  // handing tensors to the sender and the final flush
  double recv_wait_s = 0;  // blocked in receives
  double idle_s = 0;       // the rest
  std::uint64_t bytes_sent = 0;
  std::uint64_t peak_held_bytes = 0;  // activation bytes actually held at most
  double loss = 0;                    // last stage; NaN elsewhere
  int k = 0;                          // the k of the schedule run (0: not a kFkB schedule)
  double forward_s = 0;               // summed over the iteration's forwards...
  double backward_s = 0;              // ...and backwards
  int forwards = 0;
  int backwards = 0;
  int sends = 0;       // tensors handed to the transport for another rank (their time: send_wait_s - flush_s)
  double flush_s = 0;  // the end-of-iteration flush (in send_wait_s)
  double step_s = 0;   // the optimizer step (in compute_s)
  std::uint64_t message_bytes = 0;   // one activation (and gradient) sent between stages
  int peak_inflight = 0;             // micro-batches between forward and backward at most
  std::optional<Decision> decision;  // rank 0 under a policy (policy.h): how this iteration's k was chosen
};

// The compute backends of one rank, by the pipeline stage each runs.
using StageBackends = std::map<int, ComputeBackend*>;

struct ExecutorOptions {
  std::chrono::milliseconds timeout{30000};             // a receive waits at most this long
  bool record_trace = false;                            // keep per-action times (Chrome trace)...
  std::size_t max_trace_events = sim::kMaxTraceEvents;  // ...of the last iterations within this many
  bool optimizer_step = true;                           // false: leave the gradients accumulated (tests)
};

class StageExecutor {
 public:
  // `lowered` must be a validated, lowered schedule; `backends` holds one backend for every stage
  // `rank` runs in it, each outliving the executor.
  StageExecutor(const schedule::Schedule& lowered, int rank, StageBackends backends, Transport& transport,
                ExecutorOptions options);

  // Runs the rank's actions for `iteration`, then the optimizer step. An error names the rank,
  // the action and the cause: "rank 1, action 4 (1RECV_F2): waiting for activation ...".
  Result<IterationMetrics> run_iteration(int iteration);
  // Runs the next iterations with `lowered` (same ranks and stages, same requirements), whose k is
  // `k`: how the adaptive scheduler switches at an iteration boundary. `lowered` must outlive its
  // use.
  void use_schedule(const schedule::Schedule& lowered, int k);
  // Per-action times so far, in the simulator's trace format (times: steady clock seconds): the
  // last iterations' within ExecutorOptions::max_trace_events (whole iterations; the first
  // trace_from() of them dropped).
  const std::vector<sim::TraceEvent>& trace() const { return trace_; }
  int trace_from() const { return trace_from_; }

 private:
  struct Iteration;  // the tensors and counters of the iteration being run (executor.cpp)
  // One action; the error without the rank/action context run_iteration adds.
  Result<void> run_action(const schedule::Action& a, Iteration& it);
  void compute(const schedule::Action& a, Iteration& it);
  Result<void> send(const schedule::Action& a, Iteration& it);
  Result<void> receive(const schedule::Action& a, Iteration& it);
  Result<IterationMetrics> finish(Iteration& it);
  ComputeBackend& backend(int stage) const;

  const schedule::Schedule* schedule_;
  int k_ = 0;
  int rank_;
  StageBackends backends_;
  Transport& transport_;
  ExecutorOptions options_;
  std::vector<sim::TraceEvent> trace_;
  std::vector<std::size_t> trace_starts_;  // where each kept iteration's events start in trace_
  int trace_from_ = 0;                     // the first iteration kept
};

}  // namespace contend::pipeline
