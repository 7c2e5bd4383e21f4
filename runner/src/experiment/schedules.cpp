#include "experiment/schedules.h"

#include <algorithm>

#include "contend/common/units.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"

namespace contend::runner {
namespace {

// A schedule or policy resolved for this workload: valid, its model fits.
Result<pipeline::ScheduleChoice> parse_schedule(const JsonReader& entry, const std::string& text,
                                                const pipeline::Workload& w) {
  auto spec = pipeline::parse_schedule_or_policy(text);
  if (!spec) {
    return entry.error(spec.error().message);
  }
  auto choice = pipeline::resolve_schedule(*spec, w.stages, w.microbatches);
  if (!choice) {
    return entry.error(choice.error().message);
  }
  // Several chunks per rank split the model over more stages: it must have a layer for each.
  if (w.uses_model()) {
    if (auto ok = pipeline::validate_model(w.model, choice->lowered.num_stages); !ok) {
      return entry.error("\"" + spec->str() + "\": " + ok.error().message);
    }
  }
  return choice;
}

// An entry of "schedules": a spec's text, or {"schedule", "transport", "name"}.
Result<ScheduleEntry> parse_entry(const JsonReader& entry, const pipeline::Workload& w) {
  if (entry.json().is_string()) {
    auto choice = parse_schedule(entry, entry.json().get<std::string>(), w);
    if (!choice) {
      return choice.error();
    }
    return ScheduleEntry{*choice, std::nullopt, choice->spec.str()};
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
  auto choice = parse_schedule(entry.at("schedule"), *text, w);
  if (!choice) {
    return choice.error();
  }
  ScheduleEntry out{*choice, std::nullopt, choice->spec.str()};
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

}  // namespace

Result<std::vector<ScheduleEntry>> parse_schedules(const JsonReader& r, const pipeline::Workload& w) {
  const auto& schedules = r.at("schedules");
  std::vector<ScheduleEntry> out;
  for (std::size_t i = 0; i < schedules.json().size(); ++i) {
    const JsonReader entry = schedules.at(i);
    auto parsed = parse_entry(entry, w);
    if (!parsed) {
      return parsed.error();
    }
    for (const ScheduleEntry& earlier : out) {
      if (earlier.name == parsed->name) {
        return entry.error("schedule \"" + parsed->name + "\" appears twice");
      }
    }
    out.push_back(std::move(*parsed));
  }
  return out;
}

}  // namespace contend::runner
