#pragma once
// A discrete-event simulator of one pipeline iteration, with the runtime's execution model: each
// rank has one compute lane running its actions in order; a send hands its tensor to the link
// and returns after the hand-off (RuntimeCosts::send_s; the runtime's sender thread does the
// rest), or with SimConfig::blocking_sends once the tensor is on the wire; each directed link
// carries its transfers one after another in the order they were sent, each after the link's
// stall in force (LinkModel::stall_s), at the link's rate, plus latency (the receiver's wake-up
// included); a receive blocks the lane
// until the tensor has arrived (receives are posted early, so data that arrived before the receive
// is reached costs nothing), and each rank ends RuntimeCosts::iteration_s after its last action.
// It is the cost model of the adaptive scheduler.
// Pure; thread-safe (no shared state).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"
#include "contend/sim/sim_config.h"

namespace contend::sim {

enum class Lane : std::uint8_t { kCompute = 0, kSend = 1, kRecv = 2 };

struct TraceEvent {
  int rank = 0;
  Lane lane = Lane::kCompute;
  schedule::Action action;
  double start_s = 0;
  double end_s = 0;    // compute: finished; send: arrived at the peer; recv: data available
  int flow_id = -1;    // send and recv of one transfer share it
  int peer_rank = -1;  // send: receiver, recv: sender
};

struct RankStats {
  double busy_s = 0;                    // computing
  double wait_s = 0;                    // lane blocked on a receive or on a local input
  double idle_s = 0;                    // makespan - busy - wait (before the first and after the last action)
  double finish_s = 0;                  // when the rank's last action ended
  int peak_inflight = 0;                // most (stage, micro-batch) activations held at once
  std::uint64_t peak_memory_bytes = 0;  // most stash bytes held at once
  std::uint64_t bytes_sent = 0;
};

struct SimResult {
  std::string schedule;
  int num_ranks = 0;
  int num_microbatches = 0;
  double makespan_s = 0;
  double throughput_mb_per_s = 0;  // micro-batches per second: m / makespan
  double bubble_fraction = 0;      // 1 - sum(busy) / (ranks * makespan)
  std::size_t actions = 0;         // actions simulated (lowered)
  std::vector<RankStats> ranks;
  std::vector<TraceEvent> trace;  // filled when SimConfig::record_trace
  // Per directed link (from rank, to rank) that shares ports (LinkModel::ports): the seconds its
  // transfers waited for them, all together; what a receiver timing each transfer would see
  // added, had the transfers shared the port's rate instead of taking turns.
  std::map<std::pair<int, int>, double> port_wait_s{};
};

// Simulates `schedule` (lowered first when it holds compute actions only). Errors:
// kInvalidArgument when config.stages does not have one entry per stage, config.costs has neither
// 0, 1 nor one entry per rank, or the schedule names a
// stage, rank or micro-batch out of range; kDeadlock naming every blocked rank's action and what
// it waits for; kInvalidArgument when a link's trace ends at rate 0 with a transfer in flight.
Result<SimResult> simulate(const schedule::Schedule& schedule, const SimConfig& config);

}  // namespace contend::sim
