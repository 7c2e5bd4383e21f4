#include "experiment/pipeline_spec.h"

#include <algorithm>

#include "contend/common/units.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

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
      return r.error_at(key,
                        "expected a duration above 0 and at most 1h (a stage that takes no time gives no "
                        "measurement), got " +
                            format_duration(**v));
    }
    out = **v;
  }
  return {};
}

constexpr long long kMaxIterations = 1000000;

Result<Spec> parse_backend(std::string_view text) {
  return pipeline::backends().parse(text);
}
Result<Spec> parse_transport(std::string_view text) {
  return pipeline::transports().parse(text);
}

}  // namespace

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

namespace {

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
    return entry.error(
        "expected a schedule name like \"kfkb:k=2\" or \"adaptive\", or {\"schedule\", "
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
}  // namespace

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

}  // namespace contend::runner
