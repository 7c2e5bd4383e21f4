#pragma once
// Schedule: for each rank, the ordered list of actions it runs in one training iteration.
// `placement` says which rank runs each stage; empty, stage s runs on rank s % num_ranks (looped:
// with num_stages = v * num_ranks, chunk c of rank r is stage c * num_ranks + r, and the last rank
// sends to the first). V placement (ZBV, DualPipeV) puts stages r and 2p-1-r on rank r.
// A "compute" schedule holds only F, B, I and W actions, as the generators emit them; lower() adds
// the sends and receives. Plain value; thread-safe to read.

#include <string>
#include <vector>

#include "contend/common/result.h"

#include "contend/schedule/action.h"

namespace contend::schedule {

struct Schedule {
  std::string name;                        // canonical spec that made it, e.g. "kfkb:k=2"
  int num_ranks = 0;                       // pipeline ranks (processes)
  int num_stages = 0;                      // pipeline stages; a multiple of num_ranks
  int num_microbatches = 0;                // micro-batches per iteration
  std::vector<std::vector<Action>> ranks;  // ranks[r]: rank r's actions in order
  std::vector<int> placement;              // stage -> rank; empty: stage % num_ranks

  int rank_of(int stage) const { return placement.empty() ? stage % num_ranks : placement[stage]; }
  int chunks_per_rank() const { return num_ranks > 0 ? num_stages / num_ranks : 0; }
  // True when any rank holds a send or receive.
  bool lowered() const;
  // Total number of actions over all ranks.
  std::size_t size() const;
  // The ranks `rank` exchanges tensors with, ascending: those that run a stage next to one of its
  // stages (stage s and s+1 on different ranks). What the runtime connects.
  std::vector<int> peers_of(int rank) const;

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

// V placement on `ranks` ranks (ZBV, DualPipeV): stage -> rank for 2 x ranks stages, rank r
// holding stages r and 2 x ranks - 1 - r, so rank 0 runs the first and the last stage.
std::vector<int> v_placement(int ranks);

// The largest pipeline contend builds schedules for: enough for any real one, small enough that a
// typo (--microbatches 1000000000) is refused before gigabytes of actions are allocated.
inline constexpr int kMaxRanks = 1024;
inline constexpr int kMaxMicrobatches = 65536;
inline constexpr long long kMaxStageMicrobatches = 1 << 22;  // ranks x micro-batches (x chunks)

// kInvalidArgument naming the limit unless 1 <= ranks <= kMaxRanks, 1 <= microbatches <=
// kMaxMicrobatches and ranks x microbatches x chunks <= kMaxStageMicrobatches.
Result<void> check_shape(int ranks, int microbatches, int chunks = 1);

// Adds communication to a compute schedule: after each F of a stage whose successor lives on
// another rank, a SEND_F; before each F of a stage whose predecessor lives on another rank, a
// RECV_F; likewise SEND_B after and RECV_B before each B or I (the input gradient is what travels;
// W sends nothing). Transfers between stages on the same rank are local hand-offs and get no
// actions, whatever the placement. A schedule that holds sends and receives already (a lowered
// CSV) is returned as it is: its communication is checked by validate(), not replaced.
Schedule lower(const Schedule& schedule);

// The compute actions only (undoes lower()).
Schedule compute_only(const Schedule& schedule);

}  // namespace contend::schedule
