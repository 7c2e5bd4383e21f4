#include "contend/pipeline/worker.h"

#include <cmath>
#include <thread>

#include "contend/common/json.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

namespace contend::pipeline {

Result<schedule::Schedule> runtime_schedule(const RunConfig& c) {
  auto s = schedule::make_schedule(c.schedule, c.world_size, c.microbatches);
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
  if (c.backend == "cpu" || c.profile) {
    if (auto ok = validate_model(c.model, c.world_size); !ok) {
      return ok.error();
    }
  }
  if (c.backend != "cpu" && c.backend != "emulated") {
    return make_error(Errc::kInvalidArgument, "backend must be cpu or emulated, got \"" + c.backend + "\"");
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
  doc["k"] = schedule_k(c.schedule, c.microbatches);
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
  return doc.dump();
}

Result<void> run_worker(const RunConfig& config, const TcpOptions& tcp,
                        const std::function<void(const IterationMetrics&)>& on_iteration,
                        std::vector<sim::TraceEvent>* trace) {
  auto lowered = runtime_schedule(config);
  if (!lowered) {
    return lowered.error();
  }
  auto backend = make_backend(config, tcp.rank);
  if (!backend) {
    return backend.error();
  }
  auto transport = connect_tcp(tcp);
  if (!transport) {
    return with_context(transport.error(), "rank " + std::to_string(tcp.rank));
  }
  ExecutorOptions options = config.executor;
  options.record_trace = trace != nullptr;
  StageExecutor executor(*lowered, tcp.rank, **backend, **transport, options);
  for (int it = 0; it < config.iterations; ++it) {
    auto m = executor.run_iteration(it);
    if (!m) {
      return m.error();
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
      StageExecutor executor(*lowered, r, **backend, *transport, config.executor);
      for (int it = 0; it < config.iterations; ++it) {
        auto m = executor.run_iteration(it);
        if (!m) {
          results[r] = m.error();
          hub.fail_rank(r, "rank " + std::to_string(r) + " failed");
          return;
        }
        metrics[r].push_back(*m);
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
