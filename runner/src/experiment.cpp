#include "contend/runner/experiment.h"

#include <algorithm>
#include <filesystem>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/pipeline/policy.h"
#include "contend/schedule/registry.h"

namespace contend::runner {
namespace {

// Reads an optional member into `out` when present; the first error wins.
template <typename T, typename Read>
void optional_into(const JsonReader& r, const std::string& key, T& out, Read read, std::optional<Error>& error) {
  if (error || !r.has(key)) {
    return;
  }
  auto v = (r.*read)(key);
  if (!v) {
    error = v.error();
  } else if (*v) {
    out = static_cast<T>(**v);
  }
}

Result<Workload> parse_workload(const JsonReader& r) {
  if (auto ok = r.check_keys({"stages", "microbatches", "iterations", "warmup", "backend", "transport", "fwd", "bwd",
                              "activation", "hidden", "layers", "microbatch_size", "seq_len"});
      !ok) {
    return ok.error();
  }
  Workload w;
  std::optional<Error> error;
  using J = JsonReader;
  optional_into(r, "stages", w.stages, &J::optional_integer, error);
  optional_into(r, "microbatches", w.microbatches, &J::optional_integer, error);
  optional_into(r, "iterations", w.iterations, &J::optional_integer, error);
  optional_into(r, "warmup", w.warmup, &J::optional_integer, error);
  optional_into(r, "backend", w.backend, &J::optional_string, error);
  optional_into(r, "transport", w.transport, &J::optional_string, error);
  optional_into(r, "fwd", w.forward, &J::optional_duration, error);
  optional_into(r, "bwd", w.backward, &J::optional_duration, error);
  optional_into(r, "activation", w.activation_bytes, &J::optional_size_bytes, error);
  optional_into(r, "hidden", w.hidden, &J::optional_integer, error);
  optional_into(r, "layers", w.layers, &J::optional_integer, error);
  optional_into(r, "microbatch_size", w.microbatch_size, &J::optional_integer, error);
  optional_into(r, "seq_len", w.seq_len, &J::optional_integer, error);
  if (error) {
    return *error;
  }
  const std::pair<const char*, int> positive[] = {
      {"stages", w.stages}, {"microbatches", w.microbatches},       {"iterations", w.iterations}, {"hidden", w.hidden},
      {"layers", w.layers}, {"microbatch_size", w.microbatch_size}, {"seq_len", w.seq_len}};
  for (const auto& [key, value] : positive) {
    if (value < 1) {
      return r.error_at(key, "expected a positive integer, got " + std::to_string(value));
    }
  }
  if (w.stages < 2) {
    return r.error_at("stages", "a pipeline needs at least 2 stages");
  }
  if (w.warmup < 0) {
    return r.error_at("warmup", "expected 0 or more iterations");
  }
  if (w.backend != "emulated" && w.backend != "cpu" && w.backend != "cuda") {
    return r.error_at("backend", "expected \"emulated\", \"cpu\" or \"cuda\", got \"" + w.backend + "\"");
  }
  if (w.transport != "tcp" && w.transport != "nccl") {
    return r.error_at("transport", "expected \"tcp\" or \"nccl\", got \"" + w.transport + "\"");
  }
  return w;
}

}  // namespace

Result<Experiment> parse_experiment(const std::string& text, const std::string& source) {
  auto json = parse_json(text, source);
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  if (auto ok = r.check_keys({"schema", "name", "description", "topology", "scenarios", "workload", "schedules",
                              "repetitions", "baseline"});
      !ok) {
    return ok.error();
  }
  Experiment e;
  e.source = source;
  if (auto ok = r.expect_schema("experiment", 1); !ok) {
    return ok.error();
  }
  auto name = r.string("name");
  if (!name) {
    return name.error();
  }
  e.name = *name;
  std::optional<Error> error;
  optional_into(r, "description", e.description, &JsonReader::optional_string, error);
  optional_into(r, "topology", e.topology, &JsonReader::optional_string, error);
  optional_into(r, "repetitions", e.repetitions, &JsonReader::optional_integer, error);
  optional_into(r, "baseline", e.baseline, &JsonReader::optional_string, error);
  if (error) {
    return *error;
  }
  if (e.topology != "netns") {
    return r.error_at("topology",
                      "expected \"netns\" (every node a namespace on this host; clusters run through "
                      "ansible/), got \"" +
                          e.topology + "\"");
  }
  if (e.repetitions < 1) {
    return r.error_at("repetitions", "expected 1 or more");
  }
  if (!r.has("workload")) {
    return r.error("missing \"workload\"");
  }
  auto workload = parse_workload(r.at("workload"));
  if (!workload) {
    return workload.error();
  }
  e.workload = *workload;
  for (const char* key : {"scenarios", "schedules"}) {
    if (!r.has(key)) {
      return r.error(std::string("missing \"") + key + "\"");
    }
    if (auto ok = r.at(key).expect_array(); !ok) {
      return ok.error();
    }
    if (r.at(key).json().empty()) {
      return r.error_at(key, "expected at least one entry");
    }
  }
  const std::filesystem::path base = std::filesystem::path(source).parent_path();
  const auto& scenarios = r.at("scenarios");
  for (std::size_t i = 0; i < scenarios.json().size(); ++i) {
    const JsonReader entry = scenarios.at(i);
    if (!entry.json().is_string()) {
      return entry.error("expected a scenario file name");
    }
    const std::string path = (base / entry.json().get<std::string>()).lexically_normal().string();
    auto s = emulator::load_scenario(path);
    if (!s) {
      return entry.error(s.error().message);
    }
    if (static_cast<int>(s->nodes.size()) != e.workload.stages) {
      return entry.error("scenario \"" + s->name + "\" has " + std::to_string(s->nodes.size()) +
                         " nodes; the workload has " + std::to_string(e.workload.stages) + " stages (one per node)");
    }
    for (const auto& earlier : e.scenarios) {
      if (earlier.name == s->name) {
        return entry.error("scenario name \"" + s->name + "\" appears twice");
      }
    }
    e.scenarios.push_back(std::move(*s));
    e.scenario_files.push_back(path);
  }
  const auto& schedules = r.at("schedules");
  for (std::size_t i = 0; i < schedules.json().size(); ++i) {
    const JsonReader entry = schedules.at(i);
    if (!entry.json().is_string()) {
      return entry.error("expected a schedule name like \"kfkb:k=2\" or \"adaptive\"");
    }
    const std::string s = entry.json().get<std::string>();
    if (pipeline::is_policy(s)) {
      if (auto p = pipeline::parse_policy(s); !p) {
        return entry.error(p.error().message);
      }
    } else if (auto made = schedule::make_schedule(s, e.workload.stages, e.workload.microbatches); !made) {
      return entry.error(made.error().message);
    } else if (made->num_stages != made->num_ranks) {
      return entry.error("\"" + s + "\" puts several stages on a rank: the runtime runs one stage per rank");
    }
    if (std::find(e.schedules.begin(), e.schedules.end(), s) != e.schedules.end()) {
      return entry.error("schedule \"" + s + "\" appears twice");
    }
    e.schedules.push_back(s);
  }
  if (std::find(e.schedules.begin(), e.schedules.end(), e.baseline) == e.schedules.end()) {
    return r.error_at("baseline", "\"" + e.baseline + "\" is not one of the schedules");
  }
  return e;
}

Result<Experiment> load_experiment(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    return text.error();
  }
  return parse_experiment(*text, path);
}

std::vector<Cell> expand(const Experiment& e) {
  std::vector<Cell> out;
  for (std::size_t s = 0; s < e.scenarios.size(); ++s) {
    for (const std::string& schedule : e.schedules) {
      std::string safe;
      for (char c : schedule) {
        safe += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' ? c : '-';
      }
      for (int rep = 0; rep < e.repetitions; ++rep) {
        out.push_back(
            {static_cast<int>(s), schedule, rep, e.scenarios[s].name + "." + safe + ".r" + std::to_string(rep + 1)});
      }
    }
  }
  return out;
}

double samples_per_iteration(const Workload& w) {
  return static_cast<double>(w.microbatches) * w.microbatch_size;
}

}  // namespace contend::runner
