#pragma once
// What the adaptive controller (adaptive.h) knows of a pipeline: each stage's compute and tensors
// and each link's goodput, latency and stall, measured in band (or the oracle's truth); and what
// the model derives from them alone: the slack each stage needs (Adaptra), the slowest link,
// PipeMorph's published warm-ups. Pure; plain values; thread-safe.

#include <cstdint>
#include <functional>
#include <vector>

#include "contend/common/rate_trace.h"

namespace contend::pipeline {

struct StageMeasurement {
  double forward_s = 0;  // one micro-batch's forward on the stage
  double backward_s = 0;
  std::uint64_t activation_bytes = 0;  // sent to the next stage (and the gradient back)
  std::uint64_t stash_bytes = 0;       // held per in-flight micro-batch
  double send_s = 0;                   // the runtime's costs on the stage's rank (sim::RuntimeCosts)
  double iteration_cost_s = 0;
};

struct LinkMeasurement {
  double goodput_bps = 0;  // from stage r to r+1; 0: not measured, taken as unlimited
  double latency_s = 0;
  std::uint64_t burst_bytes = 0;  // token-bucket depth, if known
  double backward_bps = 0;        // from r+1 to r; 0: as goodput_bps
  double stall_s = 0;             // each message waits this before it is sent (a straggler), both ways
};

struct Measurements {
  std::vector<StageMeasurement> stages;  // p entries
  std::vector<LinkMeasurement> links;    // p - 1 entries
  // The oracle only: each link's rate over the coming iteration (time 0 = its start), used
  // instead of the links' constant rates. Empty for in-band decisions.
  std::vector<RateTrace> link_traces;
  // The same for the other way (r+1 -> r) where the oracle knows it; empty: as link_traces.
  std::vector<RateTrace> link_traces_back;
  // With link_traces: the bucket link r's shaper holds at a rate, so that each way's bucket follows
  // its trace as a shaper's does (a new rate comes with the burst for it): the oracle's is the
  // shaper's rule (OracleTruth::burst_bytes), a prediction's the measured bucket's time at the
  // measured rate. Unset: each link's measured burst_bytes throughout.
  std::function<double(int link, double rate_bps)> burst_of;
  // Per link (r -> r+1), the rate of a drop seen recently (the lowest measured); empty: none seen.
  // Among the candidates about as fast as the fastest now, the one fastest at these rates wins
  // before the leanest: when preemption recurs, being ready for it costs memory, not time.
  std::vector<double> drop_bps;
  // Per link, a stall to be ready for in the same way: the highest seen recently on any link, put
  // on every link (stragglers move: PipeMorph's traces stall one to three links at a time, another
  // set each episode); empty: none seen.
  std::vector<double> drop_stall_s;
  // How the runtime sends (SendOptions): whether a send holds the compute until its tensor is out
  // (sim::SimConfig::blocking_sends), how many tensors to one peer wait out a stall at once, and
  // whether a stall may run while the tensor before is on the wire (sim::LinkModel).
  bool blocking_sends = false;
  int stall_slots = 1;
  bool stall_overlaps_wire = false;
};

// Adaptra's estimate of the slack each stage needs: the extra micro-batches in flight that cover
// the time the links behind it add to a micro-batch's round trip (each link's forward and
// backward transfer and latencies, summed from the stage to the last), in units of the slowest
// stage's forward plus backward. Non-increasing along the pipeline, so it never deadlocks.
// All zeros when the links add nothing. With `only_link` r >= 0: that link's time alone.
std::vector<int> slack_estimate(const Measurements& m, int only_link = -1);
// The link (r -> r+1) that adds the most to a round trip; -1 when none adds anything.
int slowest_link(const Measurements& m);
// PipeMorph's published rule (the Adaptra artifact's get_adapted_warmup_fwds): the forwards each
// stage runs before its first backward, the last stage 1 and each earlier stage the next one's
// plus ceil(delay on its link to the next / its own forward time) + 2; each at most
// `microbatches` (the artifact's rule has no cap, and waits forever for a forward that never
// comes when one exceeds them). `forward_s` per stage (> 0), `delay_s` per link r -> r+1.
std::vector<int> pipemorph_warmups(const std::vector<double>& forward_s, const std::vector<double>& delay_s,
                                   int microbatches);
// The same warm-ups for the stages and stalls of `m`, as slack over ZB-H1's (and 1F1B's) own:
// p-1-r forwards before the steady phase, whose first forward is the w-th.
std::vector<int> pipemorph_extra(const Measurements& m, int microbatches);
// The same within a memory limit (ours: the artifact's rule has none): the rule's slack if it
// `fits`, else the rule's for the largest share of the measured stalls whose slack fits (so its
// shape is kept: each stage 2 forwards more than the next at least), else none (all zeros).
std::vector<int> pipemorph_extra_within(const Measurements& m, int microbatches,
                                        const std::function<bool(const std::vector<int>&)>& fits);

}  // namespace contend::pipeline
