#include "experiment/pipeline_spec.h"

#include <algorithm>

#include "contend/common/units.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

namespace contend::runner {
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
    if (auto ok = pipeline::validate_model(e.workload.model, made->num_stages); !ok) {
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
