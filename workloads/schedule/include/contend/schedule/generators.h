#pragma once
// Schedule generators: pure functions from (ranks, micro-batches, parameters) to a compute
// schedule (F, B, I and W; lower() adds communication). Each one is also reachable by name through
// make_schedule() in registry.h, which validates the parameters; the functions here require
// ranks >= 1, microbatches >= 1 and k >= 1 and abort otherwise (a bug in the caller).
// Each stage's backwards run in micro-batch order (looped_bfs excepted), so schedules accumulate
// gradients alike.

#include <functional>
#include <string>
#include <vector>

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

// kFkB with slack (Adaptra's slackness): stage s warms up with w_s = min(m, k(p-s-1) + extra[s])
// forwards (slack_warmups), then runs kFkB's groups of k forwards and k backwards, then cools down.
// Peak in-flight on stage s: min(m, w_s + k), so memory grows only where extra[s] > 0. extra empty
// or all zeros is kfkb(ranks, microbatches, k) exactly (k = 1: 1F1B). Requires extra[s] >= 0.
// kInvalidArgument when extra does not have one entry per rank, or when it would deadlock: some
// stage s warms up with fewer forwards than s+1 (w_s < w_{s+1}) and does not run all m forwards
// before its first backward (w_s + k < m); the message names the stage and the largest extra[s+1]
// allowed, extra[s] + k. Named slack_name(k, extra).
Result<Schedule> slack(int ranks, int microbatches, int k, const std::vector<int>& extra);

// The warm-up forwards w_s of each stage under slack(); extra shorter than ranks counts as zeros.
std::vector<int> slack_warmups(int ranks, int microbatches, int k, const std::vector<int>& extra);

// The canonical spec text of slack(.., k, extra): "kfkb:k=K" when extra is empty or all zeros,
// "slack:extra=E0/E1/..." when k = 1, otherwise "kfkb:k=K,extra=E0/E1/...". Policies take it as a
// Spec through registry.h's kfkb_spec.
std::string slack_name(int k, const std::vector<int>& extra);
// A slack vector as the spec grammar writes it: "0/2/1/0".
std::string list_text(const std::vector<int>& extra);

// Megatron-LM's interleaved 1F1B with v model chunks per rank (looped placement: stage c*p + r is
// chunk c of rank r) and Megatron's microbatch_group_size_per_vp_stage as `group` (0: p).
// Micro-batches form groups of `group`; each group runs through chunk 0, then chunk 1, ..., before
// the next starts (the last group holds what is left). Rank r warms up with
// min(m*v, 2*(p-r-1) + (v-1)*group) forwards, runs 1F1B over chunk-steps, then cools down.
// Peak in-flight on rank r: min(m*v, 2*(p-r-1) + (v-1)*group + 1).
// Requires v >= 2 and Megatron's conditions: p <= group <= m (or group = m < p, PyTorch's one
// round) and m mod group 0 or >= p; with the default group, m a multiple of p. kInvalidArgument
// otherwise, saying which.
Result<Schedule> interleaved_1f1b(int ranks, int microbatches, int v, int group = 0);

// PyTorch's ScheduleLoopedBFS (breadth-first pipeline): each rank runs every micro-batch's forward
// on its chunk 0, then on chunk 1, ...; then the backwards from its last chunk down, each chunk's
// micro-batches in reverse order (the only schedule here whose backwards do not run in order).
// Looped placement. Peak in-flight: m*v on every rank.
Schedule looped_bfs(int ranks, int microbatches, int v);

// PyTorch's ScheduleInterleavedZeroBubble (the zero-bubble paper's ZB1P, ZB-H1 at v = 1) with v
// chunks per rank, looped placement, and the backward split into I and W: rank r warms up with
// min(m*v, (v-1)*g + p-1-r) forwards, where g = m / max(1, floor(m/p)) (PyTorch's micro-batches
// per round), then runs F and I, deferring each W by r Is, then the cool-down. Chunks are visited
// as interleaved_1f1b visits them with group g. Peak in-flight on rank r: min(m*v, warm-up + 1 + r).
// Requires m a multiple of max(1, floor(m/p)) (PyTorch's rounds): kInvalidArgument otherwise.
// With `extra` (one entry per rank, v = 1 only), rank r warms up with that many more forwards, at
// most m: Adaptra's slack on the zero-bubble schedule, as PipeMorph adapts its warm-up; the
// warm-ups must not increase along the pipeline (a stage would wait for a backward its successor
// runs only after more forwards than it sends): kInvalidArgument naming the stage otherwise.
Result<Schedule> interleaved_zero_bubble(int ranks, int microbatches, int v, const std::vector<int>& extra = {});

// PyTorch's ScheduleZBVZeroBubble (zero bubble, V shape): 2 chunks per rank in V placement
// (v_placement: rank r holds stages r and 2p-1-r), backward split into I and W, built for
// max(m, 2p-1) micro-batches and cut to m. Peak in-flight: see docs/schedules.md (2p on rank 0).
Schedule zbv(int ranks, int microbatches);

// PyTorch's ScheduleDualPipeV (DeepSeek's DualPipe folded into a V): 2 chunks per rank in V
// placement; F of one chunk beside B of the other in the steady state (PyTorch's OVERLAP_F_B, run
// here as F then B), I and W at the ends. Requires m >= 2p (PyTorch's condition): kInvalidArgument
// otherwise. Peak in-flight: see docs/schedules.md.
Result<Schedule> dualpipev(int ranks, int microbatches);

// Reads the file a spec names (csv:PATH): its text, or an error naming the path.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// The schedule in the PyTorch-format CSV at `path` (csv.h: read_csv_table), read through `read`,
// for a run of `ranks` ranks and `microbatches` micro-batches: kInvalidArgument when the file's
// ranks or micro-batches differ from the run's (saying both), or when it does not validate (the
// error names the rank, the CSV column and the action); a read or parse error as `read` and
// from_csv give it. Compute-only files come back compute-only (lower() adds the communication);
// files with sends and receives come back as they are, checked.
Result<Schedule> csv_schedule(const std::string& path, int ranks, int microbatches, const FileReader& read);

}  // namespace contend::schedule
