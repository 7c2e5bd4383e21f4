#pragma once
// Policies choose each iteration's schedule at rank 0, behind one interface, so a comparison runs
// all of them through the same protocol (coordinator.h) and logs them alike. They share the spec
// grammar and the namespace of schedule names (common/spec.h): `fixed:k=2`,
// `adaptive:kmax=8,mem=64MiB`, `oracle`. The table is in policy.cpp, one line per policy
// (docs/adaptive.md lists every option). Not thread-safe: one policy, at rank 0.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "contend/common/rate_trace.h"
#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/common/stall_schedule.h"
#include "contend/pipeline/policy/adaptive.h"
#include "contend/pipeline/transport/transport.h"
#include "contend/schedule/schedule.h"

namespace contend::pipeline {

// What one rank measured in the iteration it just ran, sent to rank 0.
struct StageReport {
  double forward_s = 0;  // per micro-batch, mean
  double backward_s = 0;
  double send_s = 0;                // the compute lane's time per send (sim::RuntimeCosts)
  double iteration_cost_s = 0;      // the final flush and the optimizer step
  std::uint64_t message_bytes = 0;  // activation sent forward (and gradient back)
  std::uint64_t stash_bytes = 0;    // held per in-flight micro-batch
  TransferTotals from_prev{};       // activations received from rank - 1
  TransferTotals from_next{};       // gradients received from rank + 1
  SendTotals to_prev{};             // gradients sent to rank - 1, as the sender timed them...
  SendTotals to_next{};             // ...and activations to rank + 1 (a stall shows only here)
  double iteration_s = 0;           // the iteration, first action to the optimizer step
};

// The oracle's ground truth: the rate the workload gets on each link (r -> r+1) over scenario
// time, and the current scenario time. The observer reads the same truth without its future.
struct OracleTruth {
  std::vector<RateTrace> links;
  std::function<double()> now_s;
  // The token-bucket depth the shaper gives a link at a rate; unset: the measured burst.
  std::function<std::uint64_t(double rate_bps)> burst_bytes;
  // Each link's stalls (empty: none); the oracle models the one in force for the coming iteration.
  std::vector<StallSchedule> stalls{};
  // The other way of each link (r+1 -> r, the gradients'), where it differs; empty: as `links`.
  std::vector<RateTrace> back{};
  // True: the coming iteration's truth (the oracle). False: the truth as it stands when deciding,
  // read in place of the measurements, what comes unknown (the observer).
  bool foresight = true;
};

class KPolicy {
 public:
  virtual ~KPolicy() = default;
  // The k of `iteration`, from every rank's report of the iteration before (`reports` is empty
  // before the first; before the first after a probe of the links, the reports carry the links
  // only, their compute times 0). Errors: no k fits the memory limit.
  virtual Result<Decision> decide(int iteration, const std::vector<StageReport>& reports) = 0;
};

// What a policy is made for.
struct PolicyContext {
  int stages = 1;
  int microbatches = 1;
  std::optional<OracleTruth> truth;  // policies that read the truth (the oracle, the observer) require it
  std::function<double()> clock;     // seconds, monotonic, for the link history; unset: steady_clock
  // Per rank, what is known before any iteration runs (compute per micro-batch, sizes, costs: the
  // stage times a workload declares, or a calibration's). With it the first decision is made by
  // the model on a probe of the links (probes_links); empty: the first iteration runs kmin.
  std::vector<StageMeasurement> prior;
  // How the run's transport sends (its spec's sends= and delegates=; the stall hook unset): the
  // model times candidates as the runtime will run them.
  SendOptions sends;
};

// A schedule or policy spec resolved once for a pipeline of `ranks` x `microbatches`: everything
// its consumers (an experiment and its cells, a simulated cell, the worker) ask of it, asked here.
struct ScheduleChoice {
  Spec spec;
  bool policy = false;         // a policy chooses each iteration's schedule; else `spec` is static
  bool reads_truth = false;    // the oracle, the observer: it reads the scenario's ground truth
  bool probes_links = false;   // a policy that probes the links before its first iteration
  Spec first;                  // what runs first: `spec` itself, or the policy's first choice
  schedule::Schedule lowered;  // `first` lowered and validated: its placement is every choice's
};

// `spec` resolved for `ranks` x `microbatches`. kInvalidArgument naming why: a shape over the
// limits, a policy whose k range does not fit, a schedule that does not build or would deadlock.
Result<ScheduleChoice> resolve_schedule(const Spec& spec, int ranks, int microbatches);

// The parts resolve_schedule asks (consumers ask resolve_schedule):
// whether the policy probes the links before its first iteration (start=probe, the default of the
// adaptive policies): every rank must agree, so each asks this of the same spec.
bool probes_links(const Spec& spec);
// The probe: kProbeFrames tensors of probe_frame_bytes(activation) each way on every link, timed
// by the receiver like the pipeline's own (at least kMinTimedBytes, at most 256 KiB: enough to get
// past a token bucket's burst on the last frames, little time on a slow link).
inline constexpr int kProbeFrames = 4;
std::uint64_t probe_frame_bytes(std::uint64_t activation_bytes);

// Every registered policy (kind "policy").
std::vector<const SpecEntry*> policy_entries();

// Parses what a user may write wherever a schedule is accepted: a policy or a static schedule
// (schedule/registry.h), one grammar, one namespace of names.
Result<Spec> parse_schedule_or_policy(std::string_view text);

// Whether `spec` names a policy (else a static schedule).
bool is_policy(const Spec& spec);
// Whether the policy reads the scenario's ground truth (the oracle, the observer: experiments only,
// labelled).
bool reads_truth(const Spec& spec);

// The k a policy runs before anything is measured (fixed: its k; the others: kmin).
int initial_k(const Spec& spec);

// The static schedule `spec` runs first on `ranks` x `microbatches`: itself for a schedule, a
// policy's first choice (its smallest group size from kmin that builds). Every schedule a policy
// chooses later has the same placement (which ranks exchange tensors).
Spec first_schedule(const Spec& spec, int ranks, int microbatches);

// The adaptive controller's options that a policy spec sets.
AdaptiveOptions adaptive_options(const Spec& spec);

// Checks what make_policy() would refuse for a pipeline of `stages` and `microbatches` (its k
// range), without a ground truth: what an experiment checks before its first cell.
Result<void> check_policy(const Spec& spec, int stages, int microbatches);

// The policy `spec` names. kInvalidArgument when its k does not fit the micro-batches, or a
// policy that reads the truth gets none (one trace per link and a clock).
Result<std::unique_ptr<KPolicy>> make_policy(const Spec& spec, const PolicyContext& context);

}  // namespace contend::pipeline
