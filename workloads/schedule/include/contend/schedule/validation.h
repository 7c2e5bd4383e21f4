#pragma once
// Validation of a schedule, compute-only or lowered.
//
// Execution model (the runtime's): sends are asynchronous (buffered: they never wait for the
// receiver), receives block until the matching send has happened, compute blocks until its inputs
// are there. A schedule is valid when every (stage, micro-batch) has exactly one F and one B on
// the rank that owns the stage, F precedes B, sends and receives pair up exactly, and executing
// every rank's list in order under that model finishes (no deadlock).
// Pure; thread-safe.

#include <vector>

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"

namespace contend::schedule {

struct ValidationReport {
  // Per rank: the most (stage, micro-batch) activations held at once, i.e. forwards done whose
  // backward is not done yet, summed over the rank's stages.
  std::vector<int> peak_inflight;
};

// The report for a valid schedule. Otherwise kInvalidArgument (structure: a missing, duplicated,
// misplaced or out-of-order action) or kDeadlock (execution stalls), with a message naming the
// rank, the action's index and text and the reason, e.g.
// "kfkb:k=2: rank 1, action 4 (1B0): backward of micro-batch 0 before its forward on stage 1".
Result<ValidationReport> validate(const Schedule& schedule);

// Per rank, the peak in-flight activations implied by the order of F and B actions alone.
// Requires a structurally sound schedule (each F before its B).
std::vector<int> peak_inflight(const Schedule& schedule);

}  // namespace contend::schedule
