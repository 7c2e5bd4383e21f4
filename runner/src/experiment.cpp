#include "contend/runner/experiment.h"

#include <algorithm>
#include <filesystem>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/pipeline/policy.h"
#include "contend/schedule/registry.h"

#include <tuple>

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

Result<Spec> parse_backend(std::string_view text) {
  return pipeline::backends().parse(text);
}
Result<Spec> parse_transport(std::string_view text) {
  return pipeline::transports().parse(text);
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
  for (const auto& [key, registry_parse, out] :
       {std::tuple{"backend", &parse_backend, &w.backend}, std::tuple{"transport", &parse_transport, &w.transport}}) {
    auto text = r.optional_string(key);
    if (!text) {
      return text.error();
    }
    if (*text) {
      auto spec = registry_parse(**text);
      if (!spec) {
        return r.error_at(key, spec.error().message);
      }
      *out = std::move(*spec);
    }
  }
  return w;
}

// The scenario files of "scenarios", each with `stages` nodes, names unique.
Result<void> parse_scenarios(const JsonReader& r, Experiment& e) {
  const std::filesystem::path base = std::filesystem::path(e.source).parent_path();
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
  return {};
}

// The specs of "schedules": parsed once here, one stage per rank, no repeats.
Result<void> parse_schedules(const JsonReader& r, Experiment& e) {
  const auto& schedules = r.at("schedules");
  for (std::size_t i = 0; i < schedules.json().size(); ++i) {
    const JsonReader entry = schedules.at(i);
    if (!entry.json().is_string()) {
      return entry.error("expected a schedule name like \"kfkb:k=2\" or \"adaptive\"");
    }
    auto spec = pipeline::parse_schedule_or_policy(entry.json().get<std::string>());
    if (!spec) {
      return entry.error(spec.error().message);
    }
    if (!pipeline::is_policy(*spec)) {
      auto made = schedule::make_schedule(*spec, e.workload.stages, e.workload.microbatches);
      if (!made) {
        return entry.error(made.error().message);
      }
      if (made->num_stages != made->num_ranks) {
        return entry.error("\"" + spec->str() + "\" puts several stages on a rank: the runtime runs one stage per rank");
      }
    }
    if (std::find(e.schedules.begin(), e.schedules.end(), *spec) != e.schedules.end()) {
      return entry.error("schedule \"" + spec->str() + "\" appears twice");
    }
    e.schedules.push_back(std::move(*spec));
  }
  return {};
}

// The top-level members other than the scenarios, workload and schedules.
Result<void> parse_header(const JsonReader& r, Experiment& e) {
  if (auto ok = r.expect_schema("experiment", 1); !ok) {
    return ok;
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
  for (const char* key : {"workload", "scenarios", "schedules"}) {
    if (!r.has(key)) {
      return r.error(std::string("missing \"") + key + "\"");
    }
  }
  for (const char* key : {"scenarios", "schedules"}) {
    if (auto ok = r.at(key).expect_array(); !ok) {
      return ok;
    }
    if (r.at(key).json().empty()) {
      return r.error_at(key, "expected at least one entry");
    }
  }
  return {};
}

// "baseline": one of the schedules (default 1f1b).
Result<void> parse_baseline(const JsonReader& r, Experiment& e) {
  auto text = r.optional_string("baseline");
  if (!text) {
    return text.error();
  }
  if (*text) {
    auto spec = pipeline::parse_schedule_or_policy(**text);
    if (!spec) {
      return r.error_at("baseline", spec.error().message);
    }
    e.baseline = std::move(*spec);
  }
  if (std::find(e.schedules.begin(), e.schedules.end(), e.baseline) == e.schedules.end()) {
    return r.error_at("baseline", "\"" + e.baseline.str() + "\" is not one of the schedules");
  }
  return {};
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
  if (auto ok = parse_header(r, e); !ok) {
    return ok.error();
  }
  auto workload = parse_workload(r.at("workload"));
  if (!workload) {
    return workload.error();
  }
  e.workload = *workload;
  for (const auto& part : {parse_scenarios, parse_schedules, parse_baseline}) {
    if (auto ok = part(r, e); !ok) {
      return ok.error();
    }
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
    for (const Spec& schedule : e.schedules) {
      std::string safe;
      for (char c : schedule.str()) {
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
