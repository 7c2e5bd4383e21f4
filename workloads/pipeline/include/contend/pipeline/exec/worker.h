#pragma once
// A pipeline run: the configuration every rank shares, one worker per rank over TCP
// (`contend worker`), or every rank as a thread of one process over the in-process transport
// (tests). Metrics are JSON lines, schema contend.iteration/1 (docs/runtime.md).

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contend/common/result.h"
#include "contend/common/stall_schedule.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/compute/model.h"
#include "contend/pipeline/exec/executor.h"
#include "contend/pipeline/exec/workload.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/pipeline/transport/tcp_transport.h"
#include "contend/schedule/schedule.h"

namespace contend::pipeline {

struct RunConfig {
  RunConfig();        // the runtime's defaults: one rank, the cpu backend, 8 micro-batches, 10 iterations
  Workload workload;  // what every rank runs: its warm-up iterations, then the measured ones
  Spec schedule = parse_schedule_or_policy("1f1b").value();  // a static schedule or a policy
  std::optional<OracleTruth> oracle;                         // the oracle policy's ground truth (rank 0)
  // The emulated network's stalls on this rank's links, by neighbouring rank (PipeMorph's
  // stragglers), on the scenario's clock: its time 0 at `scenario_zero_s` on the steady clock.
  std::map<int, StallSchedule> stalls;
  double scenario_zero_s = 0;
  bool profile = false;  // emulated: take durations from the cpu backend's profile
  ExecutorOptions executor;
};

// The schedule of `config` resolved for its workload (resolve_schedule: its lowered, validated first
// schedule), or why not (a shape over the limits, a policy whose k does not fit, a schedule that
// does not build or deadlocks, an activation over the limit, a model without a layer for each of
// the schedule's stages).
Result<ScheduleChoice> runtime_schedule(const RunConfig& config);

// The backends of `rank`: one for each stage it runs in `lowered` (several in interleaved and V
// schedules), made by config.workload.backend.
struct RankBackends {
  std::vector<std::unique_ptr<ComputeBackend>> owned;
  StageBackends stages;  // by stage, pointing into `owned`
};
Result<RankBackends> make_rank_backends(const RunConfig& config, const schedule::Schedule& lowered, int rank);

// Runs `rank`'s iterations of `choice` (runtime_schedule(config)) on `transport`, with a policy's
// coordinator when the schedule names one, calling `on_iteration` after each. Errors name the
// rank, action and peer.
Result<void> run_rank(const RunConfig& config, const ScheduleChoice& choice, int rank, const StageBackends& backends,
                      Transport& transport, const std::function<void(const IterationMetrics&)>& on_iteration,
                      std::vector<sim::TraceEvent>* trace);

// The record of `m` in the iteration log (contend.iteration/1, docs/runtime.md), for a
// JsonLinesWriter.
nlohmann::ordered_json metrics_record(const RunConfig& config, const IterationMetrics& m);
// A policy's decision as the iteration line's "decision" field (docs/adaptive.md: What is logged).
nlohmann::ordered_json decision_record(const std::string& policy, const Decision& d);

inline constexpr const char* kIterationSchema = "contend.iteration/1";

// How config's transport sends: waiting for each tensor (its "sends=wait"), and the stalls of
// config.stalls on the scenario's clock.
SendOptions send_options(const RunConfig& config);

// Runs `rank` over config.transport (bootstrapped over TCP) for every iteration, calling
// `on_iteration` after each. Errors name the rank, action and peer.
Result<void> run_worker(const RunConfig& config, const TcpOptions& tcp,
                        const std::function<void(const IterationMetrics&)>& on_iteration,
                        std::vector<sim::TraceEvent>* trace);

// Every rank as a thread of this process over the in-process transport. Returns per rank its
// metrics of every iteration; `inspect(rank, backends)` runs on each rank's thread at the end.
Result<std::vector<std::vector<IterationMetrics>>> run_in_process(
    const RunConfig& config, const std::function<void(int, const StageBackends&)>& inspect = nullptr);

}  // namespace contend::pipeline
