#include "contend/pipeline/worker.h"

#include <cmath>
#include <map>
#include <thread>

#include "contend/common/json.h"
#include "contend/pipeline/coordinator.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

namespace contend::pipeline {

Result<schedule::Schedule> runtime_schedule(const RunConfig& c) {
  std::string name = c.schedule;
  if (is_policy(c.schedule)) {
    auto spec = parse_policy(c.schedule);
    if (!spec) {
      return spec.error();
    }
    // The oracle's truth is rank 0's alone; run_rank checks it there.
    if (spec->kind != "oracle" || c.oracle) {
      if (auto policy = make_policy(*spec, c.world_size, c.microbatches, c.oracle); !policy) {
        return policy.error();
      }
    }
    name = "kfkb:k=" + std::to_string(spec->kind == "fixed" ? spec->k : spec->options.k_min);
  }
  auto s = schedule::make_schedule(name, c.world_size, c.microbatches);
  if (!s) {
    return s.error();
  }
  if (s->num_stages != s->num_ranks) {
    return make_error(Errc::kUnsupported, "schedule \"" + c.schedule +
                                              "\" puts several stages on a rank; the runtime "
                                              "runs one stage per rank (simulate it with contend sim)");
  }
  auto lowered = schedule::lower(*s);
  if (auto ok = schedule::validate(lowered); !ok) {
    return ok.error();
  }
  const bool model_backend = c.backend == "cpu" || find_backend(c.backend) != nullptr;
  if (model_backend || c.profile) {
    if (auto ok = validate_model(c.model, c.world_size); !ok) {
      return ok.error();
    }
  }
  if (c.backend != "emulated" && !model_backend) {
    return make_error(Errc::kInvalidArgument,
                      "backend must be cpu, emulated" + std::string(find_backend("cuda") != nullptr ? " or cuda" : "") +
                          ", got \"" + c.backend + "\"" + (c.backend == "cuda" ? " (this build has no CUDA)" : ""));
  }
  return lowered;
}

std::pair<std::vector<MlpStage>, double> reference_iteration(const ModelConfig& model, int num_stages, int microbatches,
                                                             int iteration) {
  std::vector<MlpStage> stages;
  for (int s = 0; s < num_stages; ++s) {
    stages.emplace_back(model, s, num_stages);
  }
  double loss = 0;
  std::vector<float> dy;
  for (int mb = 0; mb < microbatches; ++mb) {
    std::vector<float> x = synthetic_input(model, iteration, mb);
    const std::vector<float> target = synthetic_target(model, x);
    for (auto& stage : stages) {
      std::vector<float> y(x.size());
      stage.forward(mb, x.data(), y.data());
      x = std::move(y);
    }
    loss += mse_loss(x, target, microbatches, dy);
    for (int s = num_stages - 1; s >= 0; --s) {
      std::vector<float> dx(dy.size());
      stages[s].backward(mb, dy.data(), dx.data());
      dy = std::move(dx);
    }
  }
  return {std::move(stages), loss / microbatches};
}

Result<std::unique_ptr<ComputeBackend>> make_backend(const RunConfig& c, int rank) {
  if (c.backend == "cpu") {
    return make_cpu_backend(c.model, rank, c.world_size, c.microbatches);
  }
  if (const BackendFactory* factory = find_backend(c.backend)) {
    return (*factory)(RunConfigView{c.model, c.world_size, c.microbatches, c.backend_options}, rank);
  }
  EmulatedCompute e = c.emulated;
  if (c.profile) {
    const auto [fwd, bwd] = profile_cpu_backend(c.model, rank, c.world_size, 5);
    e.forward = fwd;
    e.backward = bwd;
    e.activation_bytes = c.model.activation_floats() * sizeof(float);
  }
  return make_emulated_backend(e, rank, c.world_size);
}

std::string metrics_line(const RunConfig& c, const IterationMetrics& m) {
  auto doc = json_document("iteration", 1);
  const double samples = static_cast<double>(c.microbatches) * c.model.microbatch_size;
  doc["rank"] = m.rank;
  doc["iteration"] = m.iteration;
  doc["schedule"] = c.schedule;
  doc["k"] = m.k > 0 ? m.k : schedule_k(c.schedule, c.microbatches);
  doc["backend"] = c.backend;
  doc["start_s"] = m.start_s;
  doc["iteration_s"] = m.iteration_s;
  doc["samples_per_s"] = m.iteration_s > 0 ? samples / m.iteration_s : 0.0;
  doc["tokens_per_s"] = m.iteration_s > 0 ? samples * c.model.seq_len / m.iteration_s : 0.0;
  doc["compute_s"] = m.compute_s;
  doc["send_wait_s"] = m.send_wait_s;
  doc["recv_wait_s"] = m.recv_wait_s;
  doc["idle_s"] = m.idle_s;
  doc["bytes_sent"] = m.bytes_sent;
  doc["peak_activation_bytes"] = m.peak_held_bytes;
  doc["loss"] = std::isnan(m.loss) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.loss);
  if (m.decision) {
    const Decision& d = *m.decision;
    nlohmann::ordered_json j;
    j["policy"] = c.schedule.substr(0, c.schedule.find(':'));
    j["evaluated"] = d.evaluated;
    j["switched"] = d.switched;
    j["k"] = d.k;
    j["link_bps"] = d.link_bps;
    nlohmann::ordered_json predicted = nlohmann::ordered_json::object();
    for (const auto& [k, t] : d.predicted_s) {
      predicted[std::to_string(k)] = t;
    }
    j["predicted_s"] = predicted;
    doc["decision"] = j;
  }
  return doc.dump();
}

namespace {

StageReport report_of(const IterationMetrics& m, Transport& transport, int rank) {
  StageReport r;
  r.forward_s = m.forwards > 0 ? m.forward_s / m.forwards : 0;
  r.backward_s = m.backwards > 0 ? m.backward_s / m.backwards : 0;
  r.message_bytes = m.message_bytes;
  r.stash_bytes = m.peak_inflight > 0 ? m.peak_held_bytes / static_cast<std::uint64_t>(m.peak_inflight) : 0;
  r.from_prev = transport.take_transfers(rank - 1);
  r.from_next = transport.take_transfers(rank + 1);
  return r;
}

}  // namespace

Result<void> run_rank(const RunConfig& config, int rank, ComputeBackend& backend, Transport& transport,
                      const std::function<void(const IterationMetrics&)>& on_iteration,
                      std::vector<sim::TraceEvent>* trace) {
  auto lowered = runtime_schedule(config);
  if (!lowered) {
    return lowered.error();
  }
  ExecutorOptions options = config.executor;
  options.record_trace = options.record_trace || trace != nullptr;
  StageExecutor executor(*lowered, rank, backend, transport, options);
  std::optional<Coordinator> coordinator;
  std::map<int, schedule::Schedule> by_k;  // lowered kFkB per k, built once
  if (is_policy(config.schedule)) {
    std::unique_ptr<KPolicy> policy;
    if (rank == 0) {
      auto made = make_policy(*parse_policy(config.schedule), config.world_size, config.microbatches, config.oracle);
      if (!made) {
        return with_context(made.error(), "rank 0");
      }
      policy = std::move(*made);
    }
    coordinator.emplace(rank, config.world_size, transport, std::move(policy), options.timeout);
  }
  std::optional<StageReport> report;
  for (int it = 0; it < config.iterations; ++it) {
    std::optional<Decision> decision;
    if (coordinator) {
      auto d = coordinator->agree(it, report);
      if (!d) {
        return make_error(d.error().code, "rank " + std::to_string(rank) + ", choosing k for iteration " +
                                              std::to_string(it) + ": " + d.error().message);
      }
      auto [pos, fresh] = by_k.try_emplace(d->k);
      if (fresh) {
        pos->second = schedule::lower(schedule::kfkb(config.world_size, config.microbatches, d->k));
      }
      executor.use_schedule(pos->second, d->k);
      if (rank == 0) {
        decision = std::move(*d);
      }
    }
    auto m = executor.run_iteration(it);
    if (!m) {
      return m.error();
    }
    m->decision = std::move(decision);
    if (coordinator) {
      report = report_of(*m, transport, rank);
    }
    if (on_iteration) {
      on_iteration(*m);
    }
  }
  if (trace != nullptr) {
    *trace = executor.trace();
  }
  return {};
}

Result<void> run_worker(const RunConfig& config, const TcpOptions& tcp,
                        const std::function<void(const IterationMetrics&)>& on_iteration,
                        std::vector<sim::TraceEvent>* trace) {
  if (auto lowered = runtime_schedule(config); !lowered) {
    return lowered.error();
  }
  auto backend = make_backend(config, tcp.rank);
  if (!backend) {
    return backend.error();
  }
  const TransportFactory* factory = nullptr;
  if (config.transport != "tcp") {
    factory = find_transport(config.transport);
    if (factory == nullptr) {
      return make_error(Errc::kUnsupported, "rank " + std::to_string(tcp.rank) + ": the " + config.transport +
                                                " transport is not built here (contend --version lists the optional "
                                                "parts; nccl needs the CUDA toolkit and NCCL at build time)");
    }
  }
  auto transport = connect_tcp(tcp);
  if (!transport) {
    return with_context(transport.error(), "rank " + std::to_string(tcp.rank));
  }
  if (factory != nullptr) {
    transport = (*factory)(std::move(*transport), tcp.rank, tcp.world_size, (*backend)->message_floats());
    if (!transport) {
      return with_context(transport.error(), "rank " + std::to_string(tcp.rank) + ", " + config.transport);
    }
  }
  return run_rank(config, tcp.rank, **backend, **transport, on_iteration, trace);
}

Result<std::vector<std::vector<IterationMetrics>>> run_in_process(
    const RunConfig& config, const std::function<void(int, ComputeBackend&)>& inspect) {
  auto lowered = runtime_schedule(config);
  if (!lowered) {
    return lowered.error();
  }
  const int p = config.world_size;
  InProcHub hub(p);
  std::vector<std::vector<IterationMetrics>> metrics(p);
  std::vector<Result<void>> results(p);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      auto backend = make_backend(config, r);
      if (!backend) {
        results[r] = backend.error();
        hub.fail_rank(r, backend.error().message);
        return;
      }
      auto transport = hub.transport(r);
      auto ok = run_rank(
          config, r, **backend, *transport, [&](const IterationMetrics& m) { metrics[r].push_back(m); }, nullptr);
      if (!ok) {
        results[r] = ok.error();
        hub.fail_rank(r, "rank " + std::to_string(r) + " failed");
        return;
      }
      if (inspect) {
        inspect(r, **backend);
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
