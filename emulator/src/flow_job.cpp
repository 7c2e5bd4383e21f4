#include "contend/emulator/flow_job.h"

#include <algorithm>

#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/units.h"
#include "timeline.h"

namespace contend::emulator {

Result<FlowJob> parse_flow_job(const std::string& text, const std::string& source, const Scenario& scenario) {
  auto json = parse_json(text, source);
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  if (auto ok = r.check_keys({"schema", "duration", "flows"}); !ok) {
    return ok.error();
  }
  if (auto ok = r.expect_schema("flow-job", 1); !ok) {
    return ok.error();
  }
  auto duration = r.duration("duration");
  if (!duration) {
    return duration.error();
  }
  FlowJob job;
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
  for (std::size_t i = 0; i < flows.json().size(); ++i) {
    const JsonReader f = flows.at(i);
    if (auto ok = f.check_keys({"name", "from", "to", "protocol", "streams", "rate", "congestion", "message_size",
                                "start", "duration", "on", "off"});
        !ok) {
      return ok.error();
    }
    // The flow's own keys go to the scenario's flow parser; the timing keys are the job's.
    nlohmann::json spec = f.json();
    for (const char* k : {"start", "on", "off"}) {
      spec.erase(k);
    }
    auto flow = detail::parse_flow(JsonReader(spec, source, f.path()), scenario);
    if (!flow) {
      return flow.error();
    }
    if (std::find(names.begin(), names.end(), flow->name) != names.end()) {
      return f.error("flow \"" + flow->name + "\" is listed twice; give each a \"name\"");
    }
    names.push_back(flow->name);
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
    const double end = std::min(job.duration_s, length->has_value() ? t0 + to_seconds(**length) : job.duration_s);
    const auto add = [&](double t, Event::Kind kind) {
      Event e;
      e.at_s = t;
      e.kind = kind;
      e.flow = *flow;
      e.origin = f.path();
      job.events.push_back(std::move(e));
    };
    if (!on->has_value()) {
      if (t0 < end) {
        add(t0, Event::Kind::kFlowStart);
        add(end, Event::Kind::kFlowStop);
      }
      continue;
    }
    const double on_s = to_seconds(**on);
    const double off_s = to_seconds(**off);
    if (on_s <= 0 || off_s <= 0) {
      return f.error("\"on\" and \"off\" must be positive durations");
    }
    for (double t = t0; t < end; t += on_s + off_s) {
      add(t, Event::Kind::kFlowStart);
      add(std::min(t + on_s, end), Event::Kind::kFlowStop);
    }
  }
  std::stable_sort(job.events.begin(), job.events.end(),
                   [](const Event& a, const Event& b) { return a.at_s < b.at_s; });
  return job;
}

}  // namespace contend::emulator
