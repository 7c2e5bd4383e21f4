#include "contend/runner/simulated/fidelity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include "contend/common/json_reader.h"
#include "contend/common/overloaded.h"
#include "contend/common/units.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/runner/truth/network.h"

namespace contend::runner {
namespace {

// The lowest goodput any link gives the workload either way over the scenario (its share where
// flows run).
double slowest_bps(const emulator::Scenario& s) {
  auto net = scenario_network(s);
  if (!net) {
    return 0;  // unknown: parse_experiment resolved it already
  }
  double lowest = std::numeric_limits<double>::infinity();
  for (const PipelineLinks* ways : {&net->links, &net->back}) {
    for (const auto& [pair, trace] : *ways) {
      for (const RateTrace::Point& p : trace.points()) {
        if (p.time_s < s.duration_s) {
          lowest = std::min(lowest, p.rate_bps);
        }
      }
    }
  }
  return std::isfinite(lowest) ? lowest : 0;
}

// What a flow starting does to a configuration: its protocol, and the preemption policy of the
// link it shares.
void add_flow(const emulator::Scenario& s, const emulator::FlowSpec& flow, FidelityConfig& c) {
  (flow.protocol == emulator::Protocol::kTcp ? c.tcp_flow : c.udp_flow) = true;
  c.closed_loop = c.closed_loop || flow.iterate_bytes > 0;
  for (const emulator::LinkSpec& link : s.links) {
    if ((link.from == flow.from && link.to == flow.to) || (link.from == flow.to && link.to == flow.from)) {
      c.preemption = emulator::preemption_name(link.preemption);
    }
  }
}

void add_events(const emulator::Scenario& s, const std::vector<emulator::Event>& events, FidelityConfig& c) {
  for (const emulator::Event& e : events) {
    std::visit(Overloaded{[&](const emulator::SetRate&) { c.rate_changes = true; },
                          [&](const emulator::SetStall& stall) { c.stall = c.stall || stall.stall_s > 0; },
                          [&](const emulator::FlowStart& start) { add_flow(s, start.flow, c); },
                          [](const emulator::FlowStop&) {},
                          [](const emulator::SetLinkState&) {}},  // experiments refuse them (experiment.cpp)
               e.action);
  }
}

// log2 of a / b, 0 where either is not positive (unknown).
double doublings(double a, double b) {
  return a > 0 && b > 0 ? std::abs(std::log2(a / b)) : 0;
}

Result<FidelityCell> parse_cell(const JsonReader& r) {
  if (auto ok = r.expect_object(); !ok) {
    return ok.error();
  }
  if (auto ok = r.check_keys({"experiment", "scenario", "schedule", "real", "ideal", "host", "own"}); !ok) {
    return ok.error();
  }
  FidelityCell cell;
  for (auto [key, out] : {std::pair{"experiment", &cell.experiment}, std::pair{"scenario", &cell.scenario},
                          std::pair{"schedule", &cell.schedule}}) {
    auto v = r.string(key);
    if (!v) {
      return v.error();
    }
    *out = *v;
  }
  for (auto [key, out] : {std::pair{"real", &cell.real}, std::pair{"ideal", &cell.ideal}, std::pair{"host", &cell.host},
                          std::pair{"own", &cell.own}}) {
    auto v = r.number(key);
    if (!v) {
      return v.error();
    }
    if (!std::isfinite(*v) || *v < 0 || *v > 1e9) {
      return r.error_at(key, "expected a throughput or a ratio from 0 (not measured) to 1e9");
    }
    *out = *v;
  }
  if (cell.real <= 0) {
    return r.error_at("real", "expected the real run's throughput, more than 0");
  }
  return cell;
}

// Fills `cell.config` from its experiment, loaded once per file into `loaded`.
Result<void> configure(FidelityCell& cell, const std::string& folder, std::map<std::string, Experiment>& loaded) {
  auto it = loaded.find(cell.experiment);
  if (it == loaded.end()) {
    auto e = load_experiment(folder + "/" + cell.experiment);
    if (!e) {
      return e.error();
    }
    it = loaded.emplace(cell.experiment, std::move(*e)).first;
  }
  const Experiment& e = it->second;
  const auto scenario = std::find_if(e.scenarios.begin(), e.scenarios.end(),
                                     [&](const emulator::Scenario& s) { return s.name == cell.scenario; });
  const auto entry = std::find_if(e.schedules.begin(), e.schedules.end(),
                                  [&](const ScheduleEntry& s) { return s.name == cell.schedule; });
  if (scenario == e.scenarios.end() || entry == e.schedules.end()) {
    return make_error(Errc::kInvalidArgument, "a fidelity cell names " + cell.scenario + " / " + cell.schedule +
                                                  ", which " + cell.experiment + " does not run");
  }
  cell.config = fidelity_config(e.workload, *scenario, entry->name, entry->schedule.policy);
  return {};
}

std::string describe(const FidelityConfig& c) {
  std::string out = std::to_string(c.stages) + " stages, " + std::to_string(c.microbatches) + " micro-batches of " +
                    format_size(static_cast<std::uint64_t>(c.activation_bytes)) + ", slowest " +
                    format_rate(c.slowest_bps);
  for (auto [on, what] : {std::pair{c.rate_changes, "rate changes"}, std::pair{c.tcp_flow, "TCP flow"},
                          std::pair{c.udp_flow, "UDP flow"}, std::pair{c.stall, "stall"}}) {
    if (on) {
      out += std::string(", ") + what;
    }
  }
  return c.preemption.empty() ? out : out + " (" + c.preemption + ")";
}

double ratio_of(const FidelityCell& cell, const std::string& calibration) {
  return calibration == "host" ? cell.host : calibration == "own" ? cell.own : cell.ideal;
}

}  // namespace

FidelityConfig fidelity_config(const Workload& w, const emulator::Scenario& s, const std::string& schedule,
                               bool policy) {
  FidelityConfig c;
  c.stages = w.stages;
  c.microbatches = w.microbatches;
  c.activation_bytes = static_cast<double>(w.emulated.activation_bytes);
  c.compute_s = std::chrono::duration<double>(w.emulated.forward + w.emulated.backward).count();
  c.slowest_bps = slowest_bps(s);
  add_events(s, s.events, c);
  add_events(s, s.iteration_events, c);
  c.schedule = schedule;
  c.policy = policy;
  return c;
}

double fidelity_distance(const FidelityConfig& a, const FidelityConfig& b) {
  // The transfer against the compute it hides behind, where the simulator's model is most tested.
  const auto wire_per_compute = [](const FidelityConfig& c) {
    return c.slowest_bps > 0 && c.compute_s > 0 ? 8 * c.activation_bytes / c.slowest_bps / c.compute_s : 0;
  };
  double d = doublings(a.stages, b.stages) + doublings(a.microbatches, b.microbatches) +
             0.5 * doublings(a.activation_bytes, b.activation_bytes) + 0.5 * doublings(a.slowest_bps, b.slowest_bps) +
             doublings(wire_per_compute(a), wire_per_compute(b));
  for (auto [x, y] :
       {std::pair{a.rate_changes, b.rate_changes}, std::pair{a.tcp_flow, b.tcp_flow}, std::pair{a.udp_flow, b.udp_flow},
        std::pair{a.stall, b.stall}, std::pair{a.closed_loop, b.closed_loop}}) {
    d += x != y ? 4 : 0;
  }
  d += a.preemption != b.preemption ? 2 : 0;
  d += a.schedule != b.schedule ? (a.policy != b.policy ? 3 : 1) : 0;
  return d;
}

const FidelityCell* nearest_cell(const FidelityTable& t, const FidelityConfig& c) {
  const FidelityCell* best = nullptr;
  double least = std::numeric_limits<double>::infinity();
  for (const FidelityCell& cell : t.cells) {
    const double d = fidelity_distance(c, cell.config);
    if (d < least) {
      least = d;
      best = &cell;
    }
  }
  return best;
}

Result<FidelityTable> parse_fidelity(const std::string& text, const std::string& source) {
  auto json = parse_document(text, source, "fidelity", 1, {"measured", "cells"});
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  FidelityTable t;
  auto measured = r.string("measured");
  if (!measured) {
    return measured.error();
  }
  t.measured = *measured;
  if (!r.has("cells")) {
    return r.error_at("cells", "missing: the measured cells");
  }
  const JsonReader cells = r.at("cells");
  if (auto ok = cells.expect_array(); !ok) {
    return ok.error();
  }
  for (std::size_t i = 0; i < cells.json().size(); ++i) {
    auto cell = parse_cell(cells.at(i));
    if (!cell) {
      return cell.error();
    }
    t.cells.push_back(std::move(*cell));
  }
  return t;
}

Result<FidelityTable> load_fidelity(const std::string& path) {
  auto text = read_json_text(path, "a fidelity file");
  if (!text) {
    return text.error();
  }
  auto t = parse_fidelity(*text, path);
  if (!t) {
    return t.error();
  }
  const std::string folder = std::filesystem::path(path).parent_path().string();
  std::map<std::string, Experiment> loaded;
  for (FidelityCell& cell : t->cells) {
    if (auto ok = configure(cell, folder, loaded); !ok) {
      return with_context(ok.error(), path);
    }
  }
  return t;
}

std::string fidelity_note(const FidelityTable& t, const Experiment& e, const std::string& calibration) {
  std::string out = "how far to trust it: simulated / real of the nearest cell measured in the fidelity suite (" +
                    calibration + (calibration == "ideal" ? "" : " calibration") + "; " + t.measured + ")\n";
  for (const emulator::Scenario& s : e.scenarios) {
    const FidelityConfig scenario = fidelity_config(e.workload, s, "", false);  // its network resolved once
    for (const ScheduleEntry& entry : e.schedules) {
      FidelityConfig mine = scenario;
      mine.schedule = entry.name;
      mine.policy = entry.schedule.policy;
      const FidelityCell* near = nearest_cell(t, mine);
      if (near == nullptr) {
        return out + "  (no measured cell)\n";
      }
      // A closed-loop job's cost the suite never measured (docs/tenants.md: the pipeline beside one
      // is simulated further from real than any cell of the suite): no ratio stands for it.
      const bool unmeasured = mine.closed_loop && !near->config.closed_loop;
      const double ratio = unmeasured ? 0 : ratio_of(*near, calibration);
      char value[32] = "n/a";
      if (ratio > 0) {
        std::snprintf(value, sizeof value, "%.3f", ratio);
      }
      char line[512];
      std::snprintf(line, sizeof line, "  %-16s %-22s %5s   nearest: %s %s / %s (%s)\n", s.name.c_str(),
                    entry.name.c_str(), value, near->experiment.c_str(), near->scenario.c_str(), near->schedule.c_str(),
                    describe(near->config).c_str());
      out += line;
      if (unmeasured) {
        out +=
            "    (no measured cell runs beside a closed-loop job: beside one the simulator is further off, "
            "docs/tenants.md)\n";
      }
    }
  }
  return out;
}

}  // namespace contend::runner
