#include "contend/runner/simulated/calibration.h"

#include <cmath>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/records.h"

namespace contend::runner {
namespace {

// Sums over every measured rank line of the files: the calibration's inputs.
struct Totals {
  double forward_s = 0;
  double backward_s = 0;
  double microbatches = 0;  // per rank line: the workload's m
  double send_s = 0;
  double sends = 0;
  double iteration_cost_s = 0;
  double lines = 0;
};

// Adds the measured iterations of `log` (the warm-up's and lines without the runtime's timings
// left out) to `t`; kParse naming the line where one has some of the timings but not all.
Result<void> add_log(const IterationLog& log, const Workload& w, Totals& t) {
  for (const IterationLine& line : log.lines) {
    if (!line.iteration || *line.iteration < w.warmup || !(line.timings || line.partial_timings)) {
      continue;
    }
    if (line.partial_timings) {
      return make_error(Errc::kParse, log.path + ":" + std::to_string(line.number) +
                                          ": an iteration line without the runtime's timings (forward_s, "
                                          "backward_s, send_wait_s, flush_s, step_s)");
    }
    const RuntimeTimings& r = *line.timings;
    t.forward_s += r.forward_s;
    t.backward_s += r.backward_s;
    t.send_s += r.send_wait_s - r.flush_s;
    t.sends += r.sends;
    t.iteration_cost_s += r.flush_s + r.step_s;
    t.microbatches += w.microbatches;
    t.lines += 1;
  }
  return {};
}

// The version calibration.json has: 2 records the workload as its members (stage_costs_json),
// where 1 had a sentence.
constexpr int kCalibrationVersion = 2;

// A calibration of version 1 is refused with what to do: its workload cannot be compared.
Result<void> older_calibration(const std::string& text, const std::string& path) {
  auto json = parse_json(text, path);
  if (json && json->is_object() && json->value("schema", "") == "contend.calibration/1") {
    return make_error(Errc::kInvalidArgument,
                      path +
                          " is a calibration of an earlier contend (contend.calibration/1), whose workload "
                          "cannot be compared with this one's: measure it again (a real contend run records "
                          "calibration.json; --calibration host measures one here)");
  }
  return {};
}

}  // namespace

Workload calibrated_workload(const Workload& w, const Calibration& c) {
  Workload out = w;
  if (c.forward_s > 0) {
    out.emulated.forward = std::chrono::round<std::chrono::nanoseconds>(std::chrono::duration<double>(c.forward_s));
    out.emulated.backward = std::chrono::round<std::chrono::nanoseconds>(std::chrono::duration<double>(c.backward_s));
  }
  return out;
}

Result<Calibration> measured_costs(const Workload& w, const std::vector<IterationLog>& logs) {
  Totals t;
  for (const IterationLog& log : logs) {
    if (auto ok = add_log(log, w, t); !ok) {
      return ok.error();
    }
  }
  if (t.lines == 0) {
    return make_error(Errc::kParse, "no measured iteration with the runtime's timings in " +
                                        std::to_string(logs.size()) + " iteration logs");
  }
  Calibration c;
  c.forward_s = t.forward_s / t.microbatches;
  c.backward_s = t.backward_s / t.microbatches;
  c.runtime.costs.send_s = t.sends > 0 ? t.send_s / t.sends : 0;
  c.runtime.costs.iteration_s = t.iteration_cost_s / t.lines;
  c.workload = pipeline::stage_costs_json(w);
  return c;
}

Result<void> write_calibration(const std::string& path, const Calibration& c) {
  nlohmann::ordered_json doc = json_document("calibration", kCalibrationVersion);
  doc["source"] = c.source;
  doc["workload"] = c.workload;
  doc["forward_s"] = c.forward_s;
  doc["backward_s"] = c.backward_s;
  doc["send_s"] = c.runtime.costs.send_s;
  doc["iteration_cost_s"] = c.runtime.costs.iteration_s;
  doc["latency_s"] = c.runtime.latency_s;
  doc["line_bps"] = c.runtime.line_bps;
  doc["start_s"] = c.runtime.start_s;
  return write_json_document(path, doc);
}

Result<Calibration> read_calibration(const std::string& path, const Workload& w) {
  auto text = read_json_text(path, "a calibration file");
  if (!text) {
    return text.error();
  }
  if (auto old = older_calibration(*text, path); !old) {
    return old.error();
  }
  auto json = parse_document(*text, path, "calibration", kCalibrationVersion,
                             {"source", "workload", "forward_s", "backward_s", "send_s", "iteration_cost_s",
                              "latency_s", "line_bps", "start_s"});
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, path);
  Calibration c;
  auto source = r.string("source");
  if (!source) {
    return source.error();
  }
  c.source = *source;
  if (!r.at("workload").json().is_object()) {
    return r.error_at("workload", "expected the workload's members (an object)");
  }
  c.workload = r.at("workload").json();
  struct Field {
    const char* key;
    double* out;
    bool required;
    double max;
    const char* expected;
  };
  constexpr const char* kSeconds = "expected seconds from 0 to 3600";
  for (const Field& f :
       {Field{"forward_s", &c.forward_s, true, 3600, kSeconds},
        Field{"backward_s", &c.backward_s, true, 3600, kSeconds},
        Field{"send_s", &c.runtime.costs.send_s, true, 3600, kSeconds},
        Field{"iteration_cost_s", &c.runtime.costs.iteration_s, true, 3600, kSeconds},
        Field{"latency_s", &c.runtime.latency_s, true, 3600, kSeconds},
        Field{"line_bps", &c.runtime.line_bps, false, 1e15, "expected bits per second from 0 (unlimited) to 1e15"},
        Field{"start_s", &c.runtime.start_s, false, 3600, kSeconds}}) {
    if (!f.required && !r.has(f.key)) {
      continue;
    }
    auto v = r.number(f.key);
    if (!v) {
      return v.error();
    }
    if (!std::isfinite(*v) || *v < 0 || *v > f.max) {
      return r.error_at(f.key, f.expected);
    }
    *f.out = *v;
  }
  if (c.workload != nlohmann::json(pipeline::stage_costs_json(w))) {
    return make_error(Errc::kInvalidArgument, path + " was measured for another workload (" + c.workload.dump() +
                                                  "); this experiment runs " + pipeline::stage_costs_json(w).dump());
  }
  return c;
}

}  // namespace contend::runner
