#include "contend/pipeline/exec/worker.h"

#include <cmath>
#include <cstdio>
#include <thread>

#include "contend/common/json.h"
#include "contend/common/units.h"
#include "contend/pipeline/policy/coordinator.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/lowered_cache.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

namespace contend::pipeline {

RunConfig::RunConfig() {
  workload.stages = 1;
  workload.microbatches = 8;
  workload.iterations = 10;
  workload.warmup = 0;
  workload.backend = backends().parse("cpu").value();
  workload.emulated = EmulatedCompute{};
}

Result<ScheduleChoice> runtime_schedule(const RunConfig& c) {
  if (c.workload.emulated.activation_bytes > kMaxActivationBytes) {
    return make_error(Errc::kInvalidArgument, "emulated activation of " +
                                                  format_size(c.workload.emulated.activation_bytes) + ": at most " +
                                                  format_size(kMaxActivationBytes));
  }
  auto choice = resolve_schedule(c.schedule, c.workload.stages, c.workload.microbatches);
  if (!choice) {
    return choice.error();
  }
  CONTEND_CHECK(backends().find(c.workload.backend) != nullptr,
                "runtime_schedule: not a backend spec: " + c.workload.backend.str());
  if (c.workload.uses_model() || c.profile) {
    if (auto ok = validate_model(c.workload.model, choice->lowered.num_stages); !ok) {
      return ok.error();
    }
  }
  return choice;
}

Result<RankBackends> make_rank_backends(const RunConfig& c, const schedule::Schedule& lowered, int rank) {
  // A rank of v chunks splits its emulated time over them, as the simulator's uniform costs do.
  const int chunks = std::max(1, lowered.chunks_per_rank());
  EmulatedCompute emulated = c.workload.emulated;
  emulated.forward /= chunks;
  emulated.backward /= chunks;
  const BackendContext context{c.workload.model, lowered.num_stages, c.workload.microbatches, emulated, c.profile};
  RankBackends out;
  for (int s = 0; s < lowered.num_stages; ++s) {
    if (lowered.rank_of(s) != rank) {
      continue;
    }
    auto b = make_backend(c.workload.backend, context, s);
    if (!b) {
      return with_context(b.error(), "rank " + std::to_string(rank) + ", stage " + std::to_string(s));
    }
    out.stages[s] = b->get();
    out.owned.push_back(std::move(*b));
  }
  return out;
}

namespace {

// What every rank's stage costs before it has run: emulated stages' declared times and sizes
// (as every rank knows them from the same config); nothing for a backend that must run to tell.
std::vector<StageMeasurement> known_stages(const RunConfig& c) {
  if (c.workload.uses_model() || c.profile) {
    return {};
  }
  const double fwd = std::chrono::duration<double>(c.workload.emulated.forward).count();
  const double bwd = std::chrono::duration<double>(c.workload.emulated.backward).count();
  const std::uint64_t bytes = c.workload.emulated.activation_bytes;
  return std::vector<StageMeasurement>(c.workload.stages, StageMeasurement{fwd, bwd, bytes, bytes, 0, 0});
}

StageReport report_of(const IterationMetrics& m, Transport& transport, int rank) {
  StageReport r;
  r.forward_s = m.forwards > 0 ? m.forward_s / m.forwards : 0;
  r.backward_s = m.backwards > 0 ? m.backward_s / m.backwards : 0;
  r.send_s = m.sends > 0 ? (m.send_wait_s - m.flush_s) / m.sends : 0;
  r.iteration_cost_s = m.flush_s + m.step_s;
  r.message_bytes = m.message_bytes;
  r.stash_bytes = m.peak_inflight > 0 ? m.peak_held_bytes / static_cast<std::uint64_t>(m.peak_inflight) : 0;
  r.from_prev = transport.take_transfers(rank - 1);
  r.from_next = transport.take_transfers(rank + 1);
  r.to_prev = transport.take_sends(rank - 1);
  r.to_next = transport.take_sends(rank + 1);
  r.iteration_s = m.iteration_s;
  return r;
}

}  // namespace

SendOptions send_options(const RunConfig& c) {
  SendOptions o = send_options_of(c.workload.transport);
  if (!c.stalls.empty()) {
    o.stall_s = [stalls = c.stalls, zero = c.scenario_zero_s](int peer, const Tag& tag) {
      const auto it = stalls.find(peer);
      if (it == stalls.end()) {
        return 0.0;
      }
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      return it->second.at(now - zero, tag.iteration);
    };
  }
  return o;
}

namespace {

// A policy's coordinator, for every rank of a run whose schedule is a policy (made at rank 0
// alone); nothing for a static schedule.
Result<std::optional<Coordinator>> coordinator_of(const RunConfig& config, const ScheduleChoice& choice, int rank,
                                                  Transport& transport, std::chrono::milliseconds timeout) {
  if (!choice.policy) {
    return std::optional<Coordinator>();
  }
  const std::vector<StageMeasurement> prior = known_stages(config);
  std::unique_ptr<KPolicy> policy;
  if (rank == 0) {
    auto made = make_policy(config.schedule, PolicyContext{config.workload.stages,
                                                           config.workload.microbatches,
                                                           config.oracle,
                                                           {},
                                                           prior,
                                                           send_options_of(config.workload.transport)});
    if (!made) {
      return with_context(made.error(), "rank 0");
    }
    policy = std::move(*made);
  }
  const bool probe = choice.probes_links && !prior.empty();
  std::optional<Coordinator> out;
  out.emplace(rank, config.workload.stages, transport, std::move(policy), timeout,
              probe ? probe_frame_bytes(config.workload.emulated.activation_bytes) : 0);
  return out;
}

}  // namespace

Result<void> run_rank(const RunConfig& config, const ScheduleChoice& choice, int rank, const StageBackends& backends,
                      Transport& transport, const std::function<void(const IterationMetrics&)>& on_iteration,
                      std::vector<sim::TraceEvent>* trace) {
  ExecutorOptions options = config.executor;
  options.record_trace = options.record_trace || trace != nullptr;
  StageExecutor executor(choice.lowered, rank, backends, transport, options);
  auto coordinator = coordinator_of(config, choice, rank, transport, options.timeout);
  if (!coordinator) {
    return coordinator.error();
  }
  schedule::LoweredCache cache(config.workload.stages, config.workload.microbatches);
  std::optional<StageReport> report;
  for (int it = 0; it < config.workload.runs(); ++it) {
    std::optional<Decision> decision;
    if (*coordinator) {
      auto d = (*coordinator)->agree(it, report);
      if (!d) {
        return make_error(d.error().code, "rank " + std::to_string(rank) + ", choosing k for iteration " +
                                              std::to_string(it) + ": " + d.error().message);
      }
      executor.use_schedule(cache.get(d->schedule), d->k);
      if (rank == 0) {
        decision = std::move(*d);
      }
    }
    auto m = executor.run_iteration(it);
    if (!m) {
      return m.error();
    }
    m->decision = std::move(decision);
    if (*coordinator) {
      report = report_of(*m, transport, rank);
    }
    if (on_iteration) {
      on_iteration(*m);
    }
  }
  if (trace != nullptr) {
    *trace = executor.trace();
    if (executor.trace_from() > 0) {
      std::fprintf(stderr, "rank %d: the trace holds iterations %d to %d, the last that fit in %zu events\n", rank,
                   executor.trace_from(), config.workload.runs() - 1, options.max_trace_events);
    }
  }
  return {};
}

Result<void> run_worker(const RunConfig& config, const TcpOptions& tcp,
                        const std::function<void(const IterationMetrics&)>& on_iteration,
                        std::vector<sim::TraceEvent>* trace) {
  auto choice = runtime_schedule(config);
  if (!choice) {
    return choice.error();
  }
  auto backends = make_rank_backends(config, choice->lowered, tcp.rank);
  if (!backends) {
    return backends.error();
  }
  TcpOptions options = tcp;
  options.neighbors = choice->lowered.peers_of(tcp.rank);
  // The largest frame a neighbour may announce: this run's tensors, or a probe's or a control
  // message's (both under 1 MiB).
  std::size_t floats = 0;
  for (const auto& b : backends->owned) {
    floats = std::max(floats, b->message_floats());
  }
  options.max_message_bytes = std::max<std::uint64_t>(floats * sizeof(float), 1u << 20);
  auto transport = connect_tcp(options);
  if (!transport) {
    return with_context(transport.error(), "rank " + std::to_string(tcp.rank));
  }
  const auto* kind = transports().find(config.workload.transport);
  CONTEND_CHECK(kind != nullptr, "run_worker: not a transport spec: " + config.workload.transport.str());
  transport = kind->kind.make(config.workload.transport, std::move(*transport), tcp.rank, tcp.world_size,
                              backends->owned.front()->message_floats());
  if (!transport) {
    return with_context(transport.error(), "rank " + std::to_string(tcp.rank) + ", " + config.workload.transport.str());
  }
  if (auto configured = (*transport)->set_send_options(send_options(config)); !configured) {
    return with_context(configured.error(),
                        "rank " + std::to_string(tcp.rank) + ", " + config.workload.transport.str());
  }
  auto ok = run_rank(config, *choice, tcp.rank, backends->stages, **transport, on_iteration, trace);
  if (!ok) {
    (*transport)->abort(ok.error().message);
  }
  return ok;
}

Result<std::vector<std::vector<IterationMetrics>>> run_in_process(
    const RunConfig& config, const std::function<void(int, const StageBackends&)>& inspect) {
  auto choice = runtime_schedule(config);
  if (!choice) {
    return choice.error();
  }
  const int p = config.workload.stages;
  InProcHub hub(p);
  std::vector<std::vector<IterationMetrics>> metrics(p);
  std::vector<Result<void>> results(p);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      auto backends = make_rank_backends(config, choice->lowered, r);
      if (!backends) {
        results[r] = backends.error();
        hub.fail_rank(r, backends.error().message);
        return;
      }
      auto transport = hub.transport(r);
      if (auto configured = transport->set_send_options(send_options(config)); !configured) {
        results[r] = configured.error();
        return;
      }
      auto ok = run_rank(
          config, *choice, r, backends->stages, *transport, [&](const IterationMetrics& m) { metrics[r].push_back(m); },
          nullptr);
      if (!ok) {
        results[r] = ok.error();
        transport->abort(ok.error().message);
        return;
      }
      if (inspect) {
        inspect(r, backends->stages);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (const auto& r : results) {
    if (!r) {
      return r.error();
    }
  }
  return metrics;
}

}  // namespace contend::pipeline
