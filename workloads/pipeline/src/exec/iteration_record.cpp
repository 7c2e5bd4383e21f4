// The iteration log's lines (contend.iteration/1, docs/runtime.md): what a rank measured in one
// iteration, and a policy's decision.

#include <cmath>
#include <variant>

#include "contend/pipeline/exec/worker.h"
#include "contend/schedule/registry.h"

namespace contend::pipeline {
namespace {

template <typename T>
using Member = T IterationMetrics::*;

// The measured fields of a line, in the order they are written: one line per metric.
struct MetricField {
  const char* key;
  std::variant<Member<double>, Member<int>, Member<std::uint64_t>> member;
};
const MetricField kMetricFields[] = {
    {"start_s", &IterationMetrics::start_s},
    {"iteration_s", &IterationMetrics::iteration_s},
    {"compute_s", &IterationMetrics::compute_s},
    {"send_wait_s", &IterationMetrics::send_wait_s},
    {"recv_wait_s", &IterationMetrics::recv_wait_s},
    {"idle_s", &IterationMetrics::idle_s},
    {"forwards", &IterationMetrics::forwards},
    {"forward_s", &IterationMetrics::forward_s},
    {"backwards", &IterationMetrics::backwards},
    {"backward_s", &IterationMetrics::backward_s},
    {"sends", &IterationMetrics::sends},
    {"flush_s", &IterationMetrics::flush_s},
    {"step_s", &IterationMetrics::step_s},
    {"bytes_sent", &IterationMetrics::bytes_sent},
    {"peak_activation_bytes", &IterationMetrics::peak_held_bytes},
};

}  // namespace

nlohmann::ordered_json metrics_record(const RunConfig& c, const IterationMetrics& m) {
  nlohmann::ordered_json doc;
  doc["rank"] = m.rank;
  doc["iteration"] = m.iteration;
  doc["schedule"] = c.schedule.str();
  doc["k"] = m.k > 0 ? m.k : schedule::group_size(c.schedule, c.workload.microbatches);
  doc["backend"] = c.workload.backend.str();
  for (const MetricField& f : kMetricFields) {
    std::visit([&](auto member) { doc[f.key] = m.*member; }, f.member);
  }
  const double samples = c.workload.samples_per_iteration();
  doc["samples_per_s"] = m.iteration_s > 0 ? samples / m.iteration_s : 0.0;
  doc["tokens_per_s"] = m.iteration_s > 0 ? samples * c.workload.model.seq_len / m.iteration_s : 0.0;
  doc["loss"] = std::isnan(m.loss) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.loss);
  if (m.decision) {
    doc["decision"] = decision_record(c.schedule.name(), *m.decision);
  }
  return doc;
}

nlohmann::ordered_json decision_record(const std::string& policy, const Decision& d) {
  nlohmann::ordered_json j;
  j["policy"] = policy;
  j["evaluated"] = d.evaluated;
  j["switched"] = d.switched;
  j["k"] = d.k;
  j["schedule"] = d.schedule.str();
  j["link_bps"] = d.link_bps;
  if (!d.stall_s.empty()) {
    j["stall_s"] = d.stall_s;
  }
  if (!d.extra.empty()) {
    j["extra"] = d.extra;
  }
  j["candidates"] = d.candidates;
  j["predicted"] = d.predicted;
  j["latency_s"] = d.latency_s;
  nlohmann::ordered_json predicted = nlohmann::ordered_json::object();
  for (const auto& [k, t] : d.predicted_s) {
    predicted[std::to_string(k)] = t;
  }
  j["predicted_s"] = predicted;
  return j;
}

}  // namespace contend::pipeline
