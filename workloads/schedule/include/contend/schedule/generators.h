#pragma once
// Schedule generators: pure functions from (ranks, micro-batches, parameters) to a compute
// schedule (F and B only; lower() adds communication). Each one is also reachable by name through
// make_schedule() in registry.h, which validates the parameters; the functions here require
// ranks >= 1, microbatches >= 1 and k >= 1 and abort otherwise (a bug in the caller).
// Backwards always run in micro-batch order, so every schedule accumulates gradients alike.

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"

namespace contend::schedule {

// GPipe: every forward, then every backward. Peak in-flight activations: m on every stage.
Schedule gpipe(int ranks, int microbatches);

// 1F1B (PipeDream-Flush): stage s warms up with min(m, p-s-1) forwards, then alternates one
// forward and one backward, then cools down with the remaining backwards.
// Peak in-flight: min(m, p-s).
Schedule one_f_one_b(int ranks, int microbatches);

// kFkB (Ada-Grouper): micro-batches form groups of k, {0..k-1}, {k..2k-1}, ...; when k does not
// divide m the last group holds the remaining m mod k. Stage s warms up with min(m, k*(p-s-1))
// forwards (whole groups), then alternates a group of forwards and a group of backwards, then
// cools down with the remaining backwards. Peak in-flight: min(m, k*(p-s)).
// k = 1 is exactly 1F1B; k >= m is exactly GPipe.
Schedule kfkb(int ranks, int microbatches, int k);

// Megatron-LM's interleaved 1F1B with v model chunks per rank (stage c*p + r is chunk c of rank
// r). Forwards of consecutive groups of p micro-batches visit the chunks in turn; rank r warms up
// with min(m*v, 2*(p-r-1) + (v-1)*p) forwards, runs 1F1B over chunk-steps, then cools down.
// Requires microbatches % ranks == 0 and v >= 2 (Megatron's conditions): kInvalidArgument
// otherwise, saying which.
Result<Schedule> interleaved_1f1b(int ranks, int microbatches, int v);

}  // namespace contend::schedule
