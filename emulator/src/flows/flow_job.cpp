#include "contend/emulator/flows/flow_job.h"

#include <algorithm>

#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"
#include "scenario/timeline.h"

namespace contend::emulator {
namespace {

// A job's flow: its own keys go to the scenario's flow parser, the timing keys are the job's.
Result<FlowSpec> parse_job_flow(const JsonReader& f, const std::string& source, const Scenario& scenario) {
  if (auto ok = f.check_keys({"name", "from", "to", "protocol", "streams", "rate", "congestion", "message_size",
                              "start", "duration", "on", "off"});
      !ok) {
    return ok.error();
  }
  nlohmann::json spec = f.json();
  for (const char* k : {"start", "on", "off"}) {
    spec.erase(k);
  }
  return detail::parse_flow(JsonReader(spec, source, f.path()), scenario);
}

// The flow's starts and stops within the job's `end_s`: once from "start" for "duration", or on
// and off from "start" (the on/off expansion the timeline's periodic pattern uses).
Result<std::vector<Event>> job_flow_events(const JsonReader& f, const FlowSpec& flow, double end_s,
                                           detail::EventBudget& budget) {
  auto start = f.optional_duration("start");
  auto length = f.optional_duration("duration");
  auto on = f.optional_duration("on");
  auto off = f.optional_duration("off");
  if (auto e = first_error(start, length, on, off)) {
    return *e;
  }
  if (on->has_value() != off->has_value()) {
    return f.error("an on/off pattern needs both \"on\" and \"off\"");
  }
  const double t0 = start->has_value() ? to_seconds(**start) : 0.0;
  const double end = std::min(end_s, length->has_value() ? t0 + to_seconds(**length) : end_s);
  const double on_s = on->has_value() ? to_seconds(**on) : end - t0;
  const double off_s = off->has_value() ? to_seconds(**off) : 0.0;
  if (on->has_value()) {
    if (auto e = first_error(detail::check_min_period(f, "on", on_s), detail::check_min_period(f, "off", off_s))) {
      return *e;
    }
  }
  std::vector<Event> out;
  if (t0 >= end) {
    return out;
  }
  const double events = 2 * detail::on_off_count(t0, end, on_s + off_s);  // a start and a stop each
  if (auto ok = budget.take(f, static_cast<std::size_t>(std::min(events, 1e18))); !ok) {
    return ok.error();
  }
  for (const detail::Episode& episode : detail::on_off_episodes(t0, end, on_s, on_s + off_s)) {
    out.push_back(Event{episode.start_s, FlowStart{flow}, f.path()});
    out.push_back(Event{episode.start_s + episode.length_s, FlowStop{flow}, f.path()});
  }
  return out;
}

}  // namespace

Result<FlowJob> parse_flow_job(const std::string& text, const std::string& source, const Scenario& scenario) {
  auto json = parse_document(text, source, "flow-job", 1, {"duration", "flows"});
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  auto duration = r.duration("duration");
  if (!duration) {
    return duration.error();
  }
  FlowJob job;
  job.source = source;
  job.duration_s = to_seconds(*duration);
  if (job.duration_s <= 0) {
    return r.error_at("duration", "expected a positive duration");
  }
  if (!r.has("flows")) {
    return r.error_at("flows", "missing; expected an array of flows");
  }
  const JsonReader flows = r.at("flows");
  if (auto ok = flows.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<std::string> names;
  detail::EventBudget budget;
  for (std::size_t i = 0; i < flows.json().size(); ++i) {
    auto flow = parse_job_flow(flows.at(i), source, scenario);
    if (!flow) {
      return flow.error();
    }
    if (std::find(names.begin(), names.end(), flow->name) != names.end()) {
      return flows.at(i).error("flow \"" + flow->name + "\" is listed twice; give each a \"name\"");
    }
    names.push_back(flow->name);
    auto events = job_flow_events(flows.at(i), *flow, job.duration_s, budget);
    if (!events) {
      return events.error();
    }
    job.events.insert(job.events.end(), events->begin(), events->end());
  }
  std::stable_sort(job.events.begin(), job.events.end(),
                   [](const Event& a, const Event& b) { return a.at_s < b.at_s; });
  return job;
}

Scenario job_scenario(const FlowJob& job, const Scenario& run) {
  Scenario s = run;
  s.source = job.source;
  s.duration_s = job.duration_s;
  s.events = job.events;
  return s;
}

}  // namespace contend::emulator
