#include "contend/runner/experiment.h"

#include <algorithm>
#include <filesystem>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/units.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

#include <tuple>

namespace contend::runner {
namespace {

// The optional duration `key` into `out`, refused outside (0, 1 h].
Result<void> read_duration(const JsonReader& r, const char* key, std::chrono::nanoseconds& out) {
  auto v = r.optional_duration(key);
  if (!v) {
    return v.error();
  }
  if (*v) {
    if (**v <= std::chrono::nanoseconds(0) || **v > std::chrono::hours(1)) {
      return r.error_at(key, "expected a duration above 0 and at most 1h (a stage that takes no time gives no "
                             "measurement), got " + format_duration(**v));
    }
    out = **v;
  }
  return {};
}

constexpr long long kMaxIterations = 1000000;
constexpr long long kMaxRepetitions = 1000;

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
  const std::tuple<const char*, long long, long long, int*> counts[] = {
      {"stages", 2, schedule::kMaxRanks, &w.stages},
      {"microbatches", 1, schedule::kMaxMicrobatches, &w.microbatches},
      {"iterations", 1, kMaxIterations, &w.iterations},
      {"warmup", 0, kMaxIterations, &w.warmup},
      {"hidden", 1, pipeline::kMaxHidden, &w.hidden},
      {"layers", 1, pipeline::kMaxLayers, &w.layers},
      {"microbatch_size", 1, pipeline::kMaxTokens, &w.microbatch_size},
      {"seq_len", 1, pipeline::kMaxTokens, &w.seq_len}};
  for (const auto& [key, lo, hi, out] : counts) {
    if (auto ok = read_count(r, key, lo, hi, *out); !ok) {
      return ok.error();
    }
  }
  for (const auto& [key, out] : {std::pair{"fwd", &w.forward}, std::pair{"bwd", &w.backward}}) {
    if (auto ok = read_duration(r, key, *out); !ok) {
      return ok.error();
    }
  }
  auto activation = r.optional_size_bytes("activation");
  if (!activation) {
    return activation.error();
  }
  if (*activation && **activation > pipeline::kMaxActivationBytes) {
    return r.error_at("activation", "expected at most " + format_size(pipeline::kMaxActivationBytes) + ", got " +
                                        format_size(**activation));
  }
  w.activation_bytes = activation->value_or(w.activation_bytes);
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
  if (auto ok = schedule::check_shape(w.stages, w.microbatches); !ok) {
    return r.error(ok.error().message);
  }
  if (pipeline::backends().find(w.backend)->kind.uses_model) {
    if (auto ok = pipeline::validate_model(model_of(w), w.stages); !ok) {
      return r.error(ok.error().message);
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
    if (e.workload.stages == 0) {
      e.workload.stages = static_cast<int>(s->nodes.size());  // a job's ranks: one per node
    }
    if (static_cast<int>(s->nodes.size()) != e.workload.stages) {
      return entry.error("scenario \"" + s->name + "\" has " + std::to_string(s->nodes.size()) +
                         " nodes; the workload has " + std::to_string(e.workload.stages) +
                         (e.job ? " ranks" : " stages") + " (one per node)");
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

// A schedule or policy for this workload: one stage per rank, valid, its model fits.
Result<Spec> parse_schedule(const JsonReader& entry, const std::string& text, const Experiment& e) {
  auto spec = pipeline::parse_schedule_or_policy(text);
  if (!spec) {
    return entry.error(spec.error().message);
  }
  if (pipeline::is_policy(*spec)) {
    if (auto ok = pipeline::check_policy(*spec, e.workload.stages, e.workload.microbatches); !ok) {
      return entry.error(ok.error().message);
    }
    return spec;
  }
  auto made = schedule::make_schedule(*spec, e.workload.stages, e.workload.microbatches);
  if (!made) {
    return entry.error(made.error().message);
  }
  if (auto ok = schedule::validate(*made); !ok) {
    return entry.error(ok.error().message);
  }
  // Several chunks per rank split the model over more stages: it must have a layer for each.
  if (pipeline::backends().find(e.workload.backend)->kind.uses_model) {
    if (auto ok = pipeline::validate_model(model_of(e.workload), made->num_stages); !ok) {
      return entry.error("\"" + spec->str() + "\": " + ok.error().message);
    }
  }
  return spec;
}

// An entry of "schedules": a spec's text, or {"schedule", "transport", "name"}.
Result<ScheduleEntry> parse_entry(const JsonReader& entry, const Experiment& e) {
  if (entry.json().is_string()) {
    auto spec = parse_schedule(entry, entry.json().get<std::string>(), e);
    if (!spec) {
      return spec.error();
    }
    return ScheduleEntry{*spec, std::nullopt, spec->str()};
  }
  if (!entry.json().is_object()) {
    return entry.error("expected a schedule name like \"kfkb:k=2\" or \"adaptive\", or {\"schedule\", "
                       "\"transport\", \"name\"}");
  }
  if (auto ok = entry.check_keys({"schedule", "transport", "name"}); !ok) {
    return ok.error();
  }
  auto text = entry.string("schedule");
  auto transport = entry.optional_string("transport");
  auto name = entry.optional_string("name");
  if (auto err = first_error(text, transport, name)) {
    return *err;
  }
  auto spec = parse_schedule(entry.at("schedule"), *text, e);
  if (!spec) {
    return spec.error();
  }
  ScheduleEntry out{*spec, std::nullopt, spec->str()};
  if (*transport) {
    auto t = pipeline::transports().parse(**transport);
    if (!t) {
      return entry.error_at("transport", t.error().message);
    }
    out.transport = *t;
    out.name += " over " + t->str();
  }
  if (*name) {
    out.name = **name;
  }
  return out;
}

// The entries of "schedules": parsed once here, no name twice.
Result<void> parse_schedules(const JsonReader& r, Experiment& e) {
  const auto& schedules = r.at("schedules");
  for (std::size_t i = 0; i < schedules.json().size(); ++i) {
    const JsonReader entry = schedules.at(i);
    auto parsed = parse_entry(entry, e);
    if (!parsed) {
      return parsed.error();
    }
    for (const ScheduleEntry& earlier : e.schedules) {
      if (earlier.name == parsed->name) {
        return entry.error("schedule \"" + parsed->name + "\" appears twice");
      }
    }
    e.schedules.push_back(std::move(*parsed));
  }
  return {};
}

// The top-level members other than the scenarios, workload and schedules.
Result<void> parse_header(const JsonReader& r, Experiment& e) {
  auto name = r.string("name");
  if (!name) {
    return name.error();
  }
  e.name = *name;
  // The name becomes part of the results folder's name: no path, nothing hidden.
  const bool plain = !e.name.empty() && e.name.size() <= 64 && e.name.front() != '.' &&
                     std::all_of(e.name.begin(), e.name.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
                     });
  if (!plain) {
    return r.error_at("name", "expected 1-64 letters, digits, '-', '_' or '.' (not first), got \"" + e.name + "\"");
  }
  auto description = r.optional_string("description");
  auto topology = r.optional_string("topology");
  if (auto err = first_error(description, topology)) {
    return *err;
  }
  e.description = description->value_or("");
  e.topology = topology->value_or(e.topology);
  if (auto ok = read_count(r, "repetitions", 1, kMaxRepetitions, e.repetitions); !ok) {
    return ok;
  }
  if (e.topology != "netns") {
    return r.error_at("topology",
                      "expected \"netns\" (every node a namespace on this host; clusters run through "
                      "ansible/), got \"" +
                          e.topology + "\"");
  }
  // A command workload's axis is "variants" (job.h); contend's pipeline's is "schedules".
  const bool job = r.has("workload") && r.at("workload").has("command");
  const char* axis = job ? "schedules" : "variants";
  if (r.has(axis)) {
    return r.error_at(axis, job ? "a command workload runs \"variants\", not \"schedules\""
                                : "\"variants\" are a command workload's (\"workload\": {\"command\": [...]})");
  }
  std::vector<const char*> lists = {"scenarios"};
  if (!job) {
    lists.push_back("schedules");
  }
  for (const char* key : {"workload", "scenarios", lists.back()}) {
    if (!r.has(key)) {
      return r.error(std::string("missing \"") + key + "\"");
    }
  }
  for (const char* key : lists) {
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
  if (e.job) {  // a variant's name; the first by default
    const auto& vs = e.job->variants;
    e.baseline = text->value_or(vs.front().name);
    if (std::none_of(vs.begin(), vs.end(), [&](const JobVariant& v) { return v.name == e.baseline; })) {
      return r.error_at("baseline", "\"" + e.baseline + "\" is not one of the variants");
    }
    return {};
  }
  if (*text) {
    // A spec names its canonical entry ("kfkb:2" is "kfkb:k=2"); anything else, an entry's name.
    auto spec = pipeline::parse_schedule_or_policy(**text);
    e.baseline = spec ? spec->str() : **text;
  }
  const auto named = [&](const ScheduleEntry& s) { return s.name == e.baseline; };
  if (std::none_of(e.schedules.begin(), e.schedules.end(), named)) {
    return r.error_at("baseline", "\"" + e.baseline + "\" is not one of the schedules");
  }
  return {};
}

// "measure": {"from": "2s", "to": "20s"}, within every scenario's duration.
Result<void> parse_measure(const JsonReader& r, Experiment& e) {
  if (!r.has("measure")) {
    return {};
  }
  const JsonReader m = r.at("measure");
  if (auto ok = m.check_keys({"from", "to"}); !ok) {
    return ok;
  }
  auto from = m.duration("from");
  auto to = m.duration("to");
  if (auto err = first_error(from, to)) {
    return *err;
  }
  const MeasureWindow w{std::chrono::duration<double>(*from).count(), std::chrono::duration<double>(*to).count()};
  if (w.to_s <= w.from_s) {
    return m.error_at("to", "expected a time after \"from\"");
  }
  for (const auto& s : e.scenarios) {
    if (w.to_s > s.duration_s) {
      return m.error_at("to", "scenario " + s.name + " lasts " + format_seconds(s.duration_s) + ", less than the window");
    }
  }
  e.measure = w;
  return {};
}

// A command workload (job.h) and its variants; its ranks, when it does not say, are the first
// scenario's nodes (parse_scenarios), and the rank whose output is read one of them.
Result<void> parse_job(const JsonReader& r, Experiment& e) {
  static const nlohmann::json kNone;
  const JsonReader variants = r.has("variants") ? r.at("variants") : JsonReader(kNone, e.source, "/variants");
  auto job = parse_command_job(r.at("workload"), variants, std::filesystem::path(e.source).parent_path().string());
  if (!job) {
    return job.error();
  }
  e.workload.stages = job->ranks;
  e.job = std::move(*job);
  if (auto ok = parse_scenarios(r, e); !ok) {
    return ok;
  }
  e.job->ranks = e.workload.stages;
  if (e.job->output_rank >= e.job->ranks) {
    return r.at("workload").error_at("output_rank", "expected a rank below " + std::to_string(e.job->ranks));
  }
  return {};
}

}  // namespace

Result<Experiment> parse_experiment(const std::string& text, const std::string& source) {
  auto json = parse_document(text, source, "experiment", 1,
                             {"name", "description", "topology", "scenarios", "workload", "schedules", "variants",
                              "repetitions", "baseline", "measure"});
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  Experiment e;
  e.source = source;
  if (auto ok = parse_header(r, e); !ok) {
    return ok.error();
  }
  if (r.at("workload").has("command")) {
    if (auto ok = parse_job(r, e); !ok) {
      return ok.error();
    }
  } else {
    auto workload = parse_workload(r.at("workload"));
    if (!workload) {
      return workload.error();
    }
    e.workload = *workload;
    for (const auto& part : {parse_scenarios, parse_schedules}) {
      if (auto ok = part(r, e); !ok) {
        return ok.error();
      }
    }
  }
  for (const auto& part : {parse_baseline, parse_measure}) {
    if (auto ok = part(r, e); !ok) {
      return ok.error();
    }
  }
  return e;
}

Result<Experiment> load_experiment(const std::string& path) {
  auto text = read_json_text(path, "an experiment file");
  if (!text) {
    return text.error();
  }
  return parse_experiment(*text, path);
}

std::vector<Cell> expand(const Experiment& e) {
  // The second axis: the schedules, or a command job's variants (a schedule-less cell each).
  std::vector<Cell> axis;
  for (const ScheduleEntry& entry : e.schedules) {
    axis.push_back({0, entry.schedule, 0, "", entry.transport.value_or(e.workload.transport), entry.name});
  }
  for (std::size_t v = 0; e.job && v < e.job->variants.size(); ++v) {
    axis.push_back({0, Spec(), 0, "", e.workload.transport, e.job->variants[v].name, static_cast<int>(v)});
  }
  std::vector<Cell> out;
  for (std::size_t s = 0; s < e.scenarios.size(); ++s) {
    for (const Cell& entry : axis) {
      std::string safe;
      for (char c : entry.name) {
        safe += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' ? c : '-';
      }
      for (int rep = 0; rep < e.repetitions; ++rep) {
        Cell cell = entry;
        cell.scenario = static_cast<int>(s);
        cell.repetition = rep;
        cell.id = e.scenarios[s].name + "." + safe + ".r" + std::to_string(rep + 1);
        out.push_back(std::move(cell));
      }
    }
  }
  return out;
}

pipeline::ModelConfig model_of(const Workload& w) {
  pipeline::ModelConfig model;
  model.hidden = w.hidden;
  model.layers = w.layers;
  model.microbatch_size = w.microbatch_size;
  model.seq_len = w.seq_len;
  return model;
}

}  // namespace contend::runner
