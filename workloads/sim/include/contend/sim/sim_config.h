#pragma once
// Inputs of the pipeline simulator: what each stage costs and what each link can carry.
// Plain structs; thread-safe to read.

#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "contend/common/rate_trace.h"

namespace contend::sim {

struct StageCost {
  double forward_s = 0;                // one micro-batch's forward on this stage
  double backward_s = 0;               // one micro-batch's backward on this stage
  std::uint64_t activation_bytes = 0;  // forward output sent to the next stage, per micro-batch
  std::uint64_t gradient_bytes = 0;    // input gradient sent to the previous stage, per micro-batch
  std::uint64_t stash_bytes = 0;       // memory held from a micro-batch's forward to its backward
  // A split backward: I takes backward_s x (1 - weight_fraction), W backward_s x weight_fraction
  // (0.5: the zero-bubble papers' assumption, I and W each as long as the forward at bwd = 2 fwd).
  double weight_fraction = 0.5;
};

struct LinkModel {
  // Serialisation rate over time; +infinity (the default) means transfers take no time.
  RateTrace rate = RateTrace::unlimited();
  double latency_s = 0;  // added to every transfer's arrival; does not occupy the link
  // Token-bucket depth over time, in bytes, as HTB and TBF have: after the link idles, up to this
  // many bytes pass at once, then the rate holds. A shaper given a new rate is given the depth for
  // it (4 ms of the rate, at least 192 KiB, here), so the depth follows the rate: at a drop the
  // bucket shrinks with it. 0: a pure rate. The bucket starts full.
  RateTrace burst_bytes = RateTrace::constant(0);
  // How fast the burst passes: the unshaped path's rate (a veth's or loopback's, CPU-bound);
  // +infinity (the default): at once.
  double line_bps = std::numeric_limits<double>::infinity();
  // A stall over the iteration's time, in seconds: each transfer waits the stall in force when
  // the link can take it before it starts, and occupies the link meanwhile, so a stalled link's
  // transfers go one after another (PipeMorph's straggler). The default: none.
  RateTrace stall_s = RateTrace::constant(0);
  // How many transfers may be in their stalls at once (the runtime's SendOptions::delegates): a
  // transfer's stall starts when it is ready and the transfer stall_slots before it has gone:
  // started on the wire where `stall_overlaps_wire` (a TCP send is done once the kernel holds its
  // tensor), else left it (NCCL's waits for that).
  int stall_slots = 1;
  bool stall_overlaps_wire = false;
  // Wires this link shares with other links of the pipeline (a fabric host's one NIC, which its
  // sends to both neighbours cross; an uplink), by any number the config chooses: a transfer
  // holds each from its start to its end, and starts only when all of them are free. Empty: none.
  std::vector<int> ports{};
};

// What the runtime costs beyond compute and the wire, on one rank (measured: runner/simulated/calibration.h,
// and in band by the adaptive policies). All zero: the ideal pipeline.
struct RuntimeCosts {
  double send_s = 0;       // the compute lane's time per send to another rank (hand-off, copy)
  double iteration_s = 0;  // after the rank's last action: the optimizer step and the final flush
};

struct SimConfig {
  std::vector<StageCost> stages;                   // one per pipeline stage (Schedule::num_stages)
  std::vector<RuntimeCosts> costs;                 // per rank; empty: none; one entry: every rank
  LinkModel default_link;                          // every directed (from rank, to rank) link without an override
  std::map<std::pair<int, int>, LinkModel> links;  // overrides, keyed by (from rank, to rank)
  // How many transfers each shared port (LinkModel::ports) holds at once: the transfers that fit
  // at their rates side by side (an uplink twice a NIC's rate holds two). Absent: one.
  std::map<int, int> port_slots;
  bool record_trace = false;  // keep every action's timing in SimResult::trace
  // Sends hold the compute lane until their tensor is on the wire, stall included (Megatron's
  // blocking sends; the runtime's sends=wait); false: a send costs the lane RuntimeCosts::send_s.
  bool blocking_sends = false;
};

// Every stage alike. For a schedule with v chunks per rank, each chunk gets 1/v of the per-rank
// compute and stash (the rank's layers are split over its chunks) and the full activation and
// gradient size (the tensor crossing a chunk boundary is as large as one crossing a rank's).
SimConfig uniform_config(int num_stages, int chunks_per_rank, double forward_s, double backward_s,
                         std::uint64_t activation_bytes, LinkModel link);

}  // namespace contend::sim
