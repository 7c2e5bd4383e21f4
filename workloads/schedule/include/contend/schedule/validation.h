#pragma once
// Validation of a schedule, compute-only or lowered.
//
// Execution model (the runtime's): sends are asynchronous (buffered: they never wait for the
// receiver), receives block until the matching send has happened, compute blocks until its inputs
// are there (F: the previous stage's F; B and I: the own F and the next stage's B or I; W: the own
// I). A schedule is valid when every (stage, micro-batch) has exactly one F and either one B or
// one I and one W, all on the rank that owns the stage, F precedes B and I, I precedes W, sends
// and receives pair up exactly, and executing every rank's list in order under that model
// finishes (no deadlock), whatever the placement of stages on ranks.
// Pure; thread-safe.

#include <vector>

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"

namespace contend::schedule {

struct ValidationReport {
  // Per rank: the most (stage, micro-batch) activations held at once, i.e. forwards done whose
  // backward is not whole yet (no B, or no W after the I), summed over the rank's stages.
  std::vector<int> peak_inflight;
};

// Where each action came from in a CSV: columns[r][i] is the 1-based column of rank r's action i
// (a composite cell gives all its actions one column). Empty: the schedule was not read from a CSV.
using ActionColumns = std::vector<std::vector<int>>;

// The report for a valid schedule. Otherwise kInvalidArgument (structure: a missing, duplicated,
// misplaced or out-of-order action) or kDeadlock (execution stalls), with a message naming the
// rank, the action's index and text and the reason, e.g.
// "kfkb:k=2: rank 1, action 4 (1B0): backward of micro-batch 0 before its forward on stage 1";
// with `columns`, the CSV column instead of the index: "rank 1, column 7 (1B0): ...".
Result<ValidationReport> validate(const Schedule& schedule, const ActionColumns& columns = {});

// Per rank, the peak in-flight activations implied by the order of the actions alone: held from
// F until B or W. Requires a structurally sound schedule (each F before its B or W).
std::vector<int> peak_inflight(const Schedule& schedule);

}  // namespace contend::schedule
