#include "contend/runner/experiment/experiment.h"

#include <algorithm>
#include <filesystem>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/units.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/runner/truth/network.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"
#include "experiment/schedules.h"

#include <tuple>

namespace contend::runner {
namespace {

// On a fabric, the ranks' hosts are theirs alone: a host a flow starts or ends on runs another
// tenant (placement rules leave such hosts out; a list, or no placement, may name them), whose
// bytes its NIC's counters would add to the job's (link_bytes; a command job's check for paths
// around the links could not tell them apart).
Result<void> check_rank_hosts_own(const JsonReader& entry, const emulator::Scenario& s) {
  const std::map<std::string, const emulator::Event*> taken = emulator::flow_ends(s.events);
  for (std::size_t r = 0; r < s.placed; ++r) {
    const auto it = taken.find(s.nodes[r]);
    if (it == taken.end()) {
      continue;
    }
    const auto& flow = std::get<emulator::FlowStart>(it->second->action).flow;
    return entry.error("scenario \"" + s.name + "\" runs rank " + std::to_string(r) + " on " + s.nodes[r] +
                       ", where flow \"" + flow.name + "\" (" + it->second->origin +
                       ") also runs: a host runs one job; place the ranks by a rule (\"pack\", \"spread\", " +
                       "\"random\": it leaves the flows' hosts out) or list other hosts");
  }
  return {};
}

// Fits the workload's ranks to `s`: one per node on links alone; on a fabric, the first `stages`
// of its placement (all of it when the workload does not say). Refuses what neither the
// simulator nor the truth models: a chain's link taken down or up (a fabric's routes around it,
// and its flow-level model with them), a fabric's stall that cannot be put on pairs of ranks
// (scenario_stalls: truth/network.h); and a stall under a user's job, whose messages only its own
// code sends (contend's transport waits the stalls).
Result<void> fit_ranks(const JsonReader& entry, Experiment& e, emulator::Scenario& s) {
  const auto link_state = [](const emulator::Event& ev) {
    return std::holds_alternative<emulator::SetLinkState>(ev.action);
  };
  if (!s.has_fabric() && std::any_of(s.events.begin(), s.events.end(), link_state)) {
    return entry.error("scenario \"" + s.name + "\" takes a link of its chain down or up (\"state\"): the " +
                       "pipeline's ranks would lose their only way; take a fabric's link down (its routes go " +
                       "around it), or play it with `contend emu play`");
  }
  const std::string what = e.job ? " ranks" : " stages";
  const int hosts = static_cast<int>(s.rank_hosts());
  if (e.workload.stages == 0) {
    e.workload.stages = hosts;  // one rank per node (on a fabric, per placed host)
  }
  if (e.job && s.has_stalls()) {
    return entry.error("scenario \"" + s.name + "\" stalls links: contend's transport waits the stalls before " +
                       "its messages, and a user's job sends its own; preempt it with rates or background flows");
  }
  if (s.has_fabric() && e.workload.stages <= hosts) {
    s.placed = static_cast<std::size_t>(e.workload.stages);
    if (auto ok = check_rank_hosts_own(entry, s); !ok) {
      return ok;
    }
    if (!s.has_stalls()) {
      return {};
    }
    if (auto stalls = scenario_stalls(s); !stalls) {
      return entry.error(stalls.error().message);
    }
    return {};
  }
  if (s.has_fabric()) {
    return entry.error("scenario \"" + s.name + "\" places ranks on " + std::to_string(hosts) +
                       " hosts; the workload has " + std::to_string(e.workload.stages) + what);
  }
  if (hosts != e.workload.stages) {
    return entry.error("scenario \"" + s.name + "\" has " + std::to_string(hosts) + " nodes; the workload has " +
                       std::to_string(e.workload.stages) + what + " (one per node)");
  }
  return {};
}

// The scenario files of "scenarios", each with `stages` nodes (on a fabric, placed hosts), names
// unique.
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
    if (auto ok = fit_ranks(entry, e, *s); !ok) {
      return ok;
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
  // A command workload's axis is "variants" (command_job.h); contend's pipeline's is "schedules".
  const bool job = r.has("workload") && r.at("workload").has("command");
  const char* other_axis = job ? "schedules" : "variants";
  if (r.has(other_axis)) {
    return r.error_at(other_axis, job ? "a command workload runs \"variants\", not \"schedules\""
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

// A schedule's or variant's name as cell ids and file names carry it: letters, digits and '.'
// kept, anything else '-'.
std::string cell_name(const std::string& name) {
  std::string safe;
  for (char c : name) {
    safe += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' ? c : '-';
  }
  return safe;
}

// No two schedules or variants may share a cell id ("a-b" and "a=b"): one would never run, and
// its results would be the other's.
Result<void> check_cell_names(const JsonReader& r, Experiment& e) {
  std::vector<std::string> names;
  for (const ScheduleEntry& entry : e.schedules) {
    names.push_back(entry.name);
  }
  for (std::size_t v = 0; e.job && v < e.job->variants.size(); ++v) {
    names.push_back(e.job->variants[v].name);
  }
  const std::string what = e.job ? "variants" : "schedules";
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (cell_name(names[i]) == cell_name(names[j])) {
        return r.at(what).error(what + " \"" + names[j] + "\" and \"" + names[i] + "\" would both be \"" +
                                cell_name(names[i]) + "\" in cell ids and file names; rename one");
      }
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

// "baseline_scenario": one of the scenarios, by name (none by default).
Result<void> parse_baseline_scenario(const JsonReader& r, Experiment& e) {
  auto name = r.optional_string("baseline_scenario");
  if (!name || !*name) {
    return name ? Result<void>() : Result<void>(name.error());
  }
  const auto named = [&](const emulator::Scenario& s) { return s.name == **name; };
  if (std::none_of(e.scenarios.begin(), e.scenarios.end(), named)) {
    std::string known;
    for (const emulator::Scenario& s : e.scenarios) {
      known += (known.empty() ? "" : ", ") + s.name;
    }
    return r.error_at("baseline_scenario", "\"" + **name + "\" is not one of the scenarios (" + known + ")");
  }
  e.baseline_scenario = **name;
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
      return m.error_at("to",
                        "scenario " + s.name + " lasts " + format_seconds(s.duration_s) + ", less than the window");
    }
  }
  e.measure = w;
  return {};
}

// A command workload (command_job.h) and its variants; its ranks, when it does not say, are the first
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

// The oracle and the observer read a scenario's network as its timeline writes it; a closed-loop
// job's traffic follows its own iterations, which no timeline says.
Result<void> check_truth_readers(const JsonReader& r, const Experiment& e) {
  for (const ScheduleEntry& entry : e.schedules) {
    for (const emulator::Scenario& s : e.scenarios) {
      const std::string flow = s.closed_loop_flow();
      if (entry.schedule.reads_truth && !flow.empty()) {
        return r.error_at("schedules", "\"" + entry.name + "\" reads the network from the scenario's timeline, " +
                                           "but scenario \"" + s.name + "\" runs a closed-loop job (flow " + flow +
                                           "), whose traffic no timeline says; use an adaptive policy");
      }
    }
  }
  return {};
}

Result<Experiment> parse_experiment(const std::string& text, const std::string& source) {
  auto json = parse_document(text, source, "experiment", 1,
                             {"name", "description", "topology", "scenarios", "workload", "schedules", "variants",
                              "repetitions", "baseline", "baseline_scenario", "measure"});
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
    auto workload = pipeline::parse_workload(r.at("workload"));
    if (!workload) {
      return workload.error();
    }
    e.workload = *workload;
    if (auto ok = parse_scenarios(r, e); !ok) {
      return ok.error();
    }
    auto schedules = parse_schedules(r, e.workload);
    if (!schedules) {
      return schedules.error();
    }
    e.schedules = std::move(*schedules);
    if (auto ok = check_truth_readers(r, e); !ok) {
      return ok.error();
    }
  }
  for (const auto& part : {check_cell_names, parse_baseline, parse_baseline_scenario, parse_measure}) {
    if (auto ok = part(r, e); !ok) {
      return ok.error();
    }
  }
  return e;
}

const pipeline::ScheduleChoice& schedule_of(const Experiment& e, const Cell& cell) {
  CONTEND_CHECK(cell.entry >= 0 && cell.entry < static_cast<int>(e.schedules.size()),
                "schedule_of: cell " + cell.id + " runs no schedule of its experiment");
  return e.schedules[static_cast<std::size_t>(cell.entry)].schedule;
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
  for (std::size_t i = 0; i < e.schedules.size(); ++i) {
    const ScheduleEntry& entry = e.schedules[i];
    axis.push_back({0, entry.schedule.spec, 0, "", entry.transport.value_or(e.workload.transport), entry.name, -1,
                    static_cast<int>(i)});
  }
  for (std::size_t v = 0; e.job && v < e.job->variants.size(); ++v) {
    axis.push_back({0, Spec(), 0, "", e.workload.transport, e.job->variants[v].name, static_cast<int>(v)});
  }
  // Repetition by repetition, every schedule in each: what the machine does meanwhile (a noisy
  // minute) falls on all of them alike, not on one schedule's repetitions together.
  std::vector<Cell> out;
  for (std::size_t s = 0; s < e.scenarios.size(); ++s) {
    for (int rep = 0; rep < e.repetitions; ++rep) {
      for (const Cell& entry : axis) {
        Cell cell = entry;
        cell.scenario = static_cast<int>(s);
        cell.repetition = rep;
        cell.id = e.scenarios[s].name + "." + cell_name(entry.name) + ".r" + std::to_string(rep + 1);
        out.push_back(std::move(cell));
      }
    }
  }
  return out;
}

}  // namespace contend::runner
