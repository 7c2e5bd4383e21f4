#include "emu_command.h"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "contend/common/units.h"
#include "contend/emulator/emulated_run.h"
#include "contend/emulator/net/leftovers.h"
#include "contend/emulator/net/netns.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/net/run_state.h"
#include "contend/emulator/net/run_status.h"
#include "contend/emulator/net/teardown.h"
#include "contend/emulator/net/topology.h"
#include "contend/emulator/player.h"
#include "emu_host_command.h"
#include "emu_predict_command.h"
#include "signals.h"

namespace contend::tools {
namespace {

using namespace contend::emulator;

struct EmuOptions {
  std::string scenario;
  std::string run;
  std::string log;
  bool keep = false;
  bool json = false;
  bool quiet = false;
  bool all = false;
  bool orphans = false;  // down --all: also namespaces of runs recorded elsewhere or nowhere
};

// The run name: --run, else the scenario's name.
Result<std::string> run_name(const EmuOptions& o, const Scenario* scenario) {
  const std::string run = !o.run.empty() ? o.run : scenario != nullptr ? scenario->name : "";
  if (run.empty()) {
    return make_error(Errc::kInvalidArgument, "name the run: a SCENARIO file or --run NAME");
  }
  if (!valid_run_name(run)) {
    return make_error(Errc::kInvalidArgument, "run name \"" + run +
                                                  "\": expected 1-64 letters, digits, '-' or '_' "
                                                  "(it becomes part of namespace names); pass --run");
  }
  return run;
}

// The scenario file of `o` and its run name; an error message on failure.
Result<std::pair<Scenario, std::string>> scenario_and_run(const EmuOptions& o) {
  auto scenario = load_scenario(o.scenario);
  if (!scenario) {
    return scenario.error();
  }
  auto run = run_name(o, &*scenario);
  if (!run) {
    return run.error();
  }
  return std::pair<Scenario, std::string>(std::move(*scenario), std::move(*run));
}

int up(const EmuOptions& o) {
  auto loaded = scenario_and_run(o);
  if (!loaded) {
    return fail("emu", loaded.error().message);
  }
  const auto& [scenario, run] = *loaded;
  const auto start = std::chrono::steady_clock::now();
  auto net = EmulatedRun::up(scenario, run, o.scenario, &install_stop_handlers());
  if (!net) {
    return fail("emu", net.error().message);
  }
  net->keep();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string switches =
      scenario.has_fabric() ? ", " + std::to_string(scenario.switches.size()) + " switches" : std::string();
  std::printf("run %s is up: %zu nodes%s, %zu links, in %s; `contend emu down --run %s` removes it\n", run.c_str(),
              scenario.nodes.size(), switches.c_str(), scenario.links.size(), format_seconds(took).c_str(),
              run.c_str());
  return 0;
}

int down_all(bool orphans) {
  auto removed = tear_down_all(orphans);
  if (!removed) {
    return fail("emu", removed.error().message);
  }
  std::printf("removed %zu recorded runs, %zu namespaces and %zu processes inside them\n", removed->runs,
              removed->namespaces, removed->processes);
  if (removed->orphans_left.empty()) {
    std::printf("no contend namespace is left\n");
    return 0;
  }
  std::string names;
  for (const std::string& ns : removed->orphans_left) {
    names += (names.empty() ? "" : ", ") + ns;
  }
  std::printf(
      "left %zu contend namespaces of runs with no state file in %s (another state folder's, another user's, or "
      "killed before their state): %s; `contend emu down --all --orphans` removes them too\n",
      removed->orphans_left.size(), state_dir().c_str(), names.c_str());
  return 0;
}

int down(const EmuOptions& o) {
  if (o.all) {
    return o.scenario.empty() && o.run.empty() ? down_all(o.orphans)
                                               : fail("emu", "--all removes every run: give it alone");
  }
  if (o.orphans) {
    return fail("emu", "--orphans goes with --all");
  }
  std::optional<Scenario> scenario;
  if (!o.scenario.empty()) {
    auto s = load_scenario(o.scenario);
    if (!s) {
      return fail("emu", s.error().message);
    }
    scenario = std::move(*s);
  }
  auto run = run_name(o, scenario ? &*scenario : nullptr);
  if (!run) {
    return fail("emu", run.error().message);
  }
  // Without a state file (a run killed before it wrote one), what the scenario would have made.
  const bool planned = scenario && fits_one_machine(*scenario).ok();  // else never up: nothing planned to list
  auto removed =
      tear_down_run(*run, planned ? plan_topology(*scenario, *run).namespaces() : std::vector<std::string>{});
  if (!removed) {
    return fail("emu", removed.error().message);
  }
  if (!removed->damaged_state.empty()) {
    std::fprintf(stderr, "contend emu: the damaged state file was removed after the run's namespaces: %s\n",
                 removed->damaged_state.c_str());
  }
  for (const std::string& ns : removed->ignored) {
    std::fprintf(stderr,
                 "contend emu: the state file listed namespace \"%s\", which run %s could not have made: "
                 "left alone\n",
                 excerpt(ns).c_str(), run->c_str());
  }
  std::printf("run %s: removed %zu namespaces", run->c_str(), removed->namespaces);
  if (removed->processes > 0) {
    std::printf(" and ended %zu processes inside them", removed->processes);
  }
  std::printf("\n");
  return 0;
}

// The status of the run `o` names: by its scenario file, else by its state or what exists of it.
Result<nlohmann::ordered_json> status_of_one(const EmuOptions& o) {
  if (!o.scenario.empty()) {
    auto loaded = scenario_and_run(o);
    if (!loaded) {
      return loaded.error();
    }
    if (auto fits = fits_one_machine(loaded->first); !fits) {
      return fits.error();
    }
    nlohmann::ordered_json doc = run_status(loaded->second, loaded->first);
    doc["processes"] = processes_json(processes_in(run_namespaces(loaded->second)));
    return doc;
  }
  auto run = run_name(o, nullptr);
  if (!run) {
    return run.error();
  }
  const RunSurvey s = survey_run(*run);
  if (!s.recorded && s.namespaces.empty()) {
    return make_error(Errc::kNotFound, "run " + *run + " is not up (no state in " + state_dir() +
                                           " and no namespace); `contend emu up SCENARIO` first");
  }
  return run_status(s);
}

void print_status(const nlohmann::ordered_json& doc) {
  if (doc.contains("problem")) {
    std::printf("run %s: %s\n", doc["run"].get<std::string>().c_str(), doc["problem"].get<std::string>().c_str());
    for (const auto& n : doc["namespaces"]) {
      std::printf("  netns %s%s\n", n["netns"].get<std::string>().c_str(), n["exists"].get<bool>() ? "" : " (missing)");
    }
  } else {
    std::printf("run %s (%s)\n", doc["run"].get<std::string>().c_str(), doc["scenario"].get<std::string>().c_str());
    for (const auto& n : doc["nodes"]) {
      std::printf("  node %-8s %-28s %s\n", n["node"].get<std::string>().c_str(), n["netns"].get<std::string>().c_str(),
                  n["exists"].get<bool>() ? "" : "(missing)");
    }
    for (const auto& sw : doc.value("switches", nlohmann::ordered_json::array())) {
      std::printf("  switch %-6s %-28s %zu ports, %zu routes %s\n", sw["switch"].get<std::string>().c_str(),
                  sw["netns"].get<std::string>().c_str(), sw["ports"].size(), sw["routes"].size(),
                  sw["exists"].get<bool>() ? "" : "(missing)");
    }
    for (const auto& l : doc["links"]) {
      std::printf("  link %s\n", l["link"].get<std::string>().c_str());
      for (const auto& e : l["ends"]) {
        std::printf("    %-8s %-15s %-16s %s\n", e["node"].get<std::string>().c_str(),
                    e["ifname"].get<std::string>().c_str(), e["address"].get<std::string>().c_str(),
                    e["rate_bps"].is_null() ? "unshaped" : format_rate(e["rate_bps"].get<double>()).c_str());
      }
    }
  }
  for (const auto& p : doc["processes"]) {
    std::printf("  process %d in %s: %s\n", p["pid"].get<int>(), p["netns"].get<std::string>().c_str(),
                p["command"].get<std::string>().c_str());
  }
}

// Every recorded run and every orphan (namespaces or processes without a state file); one run
// with SCENARIO or --run.
int status(const EmuOptions& o) {
  const bool one = !o.scenario.empty() || !o.run.empty();
  auto all = nlohmann::ordered_json::array();
  if (one) {
    auto doc = status_of_one(o);
    if (!doc) {
      return fail("emu", doc.error().message);
    }
    all.push_back(std::move(*doc));
  } else {
    for (const RunSurvey& s : survey_runs()) {
      all.push_back(run_status(s));
    }
  }
  if (o.json) {
    std::cout << (one ? all[0] : all).dump(2) << "\n";
    return 0;
  }
  if (all.empty()) {
    std::printf("no runs are up (state folder %s) and no contend namespace exists\n", state_dir().c_str());
  }
  bool leftovers = false;
  for (const auto& doc : all) {
    print_status(doc);
    leftovers = leftovers || doc.contains("problem") || !doc["processes"].empty();
  }
  if (leftovers) {
    std::printf(
        "`contend emu down --run NAME` removes a run with its processes, `contend emu down --all` every run recorded "
        "here (`--orphans`: and the rest)\n");
  }
  return 0;
}

int play_command(const EmuOptions& o) {
  auto loaded = scenario_and_run(o);
  if (!loaded) {
    return fail("emu", loaded.error().message);
  }
  const auto& [scenario, run] = *loaded;
  const auto& stop = install_stop_handlers();
  // The log first: one that exists already stops the play before anything is built.
  const std::string log_path = o.log.empty() ? run + "-events.jsonl" : o.log;
  auto log = EventLog::open(log_path);
  if (!log) {
    return fail("emu", log.error().message);
  }
  auto net = EmulatedRun::up_or_attach(scenario, run, o.scenario, &stop);
  if (!net) {
    if (log_path != "-") {
      ::unlink(log_path.c_str());  // nothing was played: no empty log left behind
    }
    return fail("emu", net.error().message);
  }
  if (o.keep) {
    net->keep();
  }
  auto report = net->play(*log, stop, PlayerOptions{std::chrono::milliseconds(100), o.quiet});
  if (!report) {
    return fail("emu", report.error().message);
  }
  std::fprintf(stderr,
               "contend emu play: %zu rate changes applied (worst lateness %s), %zu flow starts and stops%s; "
               "log %s%s\n",
               report->applied, format_seconds(report->max_lateness_s).c_str(), report->flow_events,
               report->stopped ? ", stopped early" : "", log_path.c_str(),
               net->tears_down() ? "; network removed" : "");
  return report->stopped ? 128 + stop_signal() : 0;
}

}  // namespace

std::function<int()> add_emu_command(CLI::App& sub) {
  auto o = std::make_shared<EmuOptions>();
  CLI::App* emu = &sub;
  emu->require_subcommand(1);
  const auto common = [&](CLI::App* cmd, bool scenario_required) {
    auto* opt = cmd->add_option("SCENARIO", o->scenario, "Scenario file (contend.scenario/1, docs/scenario-format.md)");
    if (scenario_required) {
      opt->required()->check(CLI::ExistingFile);
    }
    cmd->add_option("--run", o->run, "Run name (default: the scenario's name); namespaces are contend-<run>.<node>");
  };
  CLI::App* up_cmd = emu->add_subcommand("up", "Create and shape the scenario's network, and leave it up");
  common(up_cmd, true);
  CLI::App* play_cmd = emu->add_subcommand("play",
                                           "Play the scenario's timeline (running `up` first when needed; "
                                           "`down` at the end unless --keep), logging every event");
  common(play_cmd, true);
  play_cmd->add_option(
      "--log", o->log,
      "Event log, JSON lines contend.events/1 (default <run>-events.jsonl; - for stdout); created new: "
      "an existing file or link is refused, never overwritten");
  play_cmd->add_flag("--keep", o->keep, "Leave the network up at the end");
  play_cmd->add_flag("--quiet", o->quiet, "No progress lines");
  CLI::App* down_cmd = emu->add_subcommand(
      "down",
      "Remove everything a run created, also after a crash: its namespaces, the processes inside them, its state");
  common(down_cmd, false);
  down_cmd->add_flag("--all", o->all,
                     "Remove every run recorded in this state folder ($CONTEND_STATE_DIR or /run/contend): its "
                     "namespaces, the processes inside them, its state file (damaged ones too); name the other "
                     "contend-* namespaces");
  down_cmd->add_flag("--orphans", o->orphans,
                     "With --all: also every contend-* namespace no state file here records, and the processes "
                     "inside (another state folder's runs, another user's, runs killed before their state)");
  CLI::App* status_cmd = emu->add_subcommand(
      "status",
      "List runs that are up, their nodes, interfaces, current rates and processes, and every contend namespace or "
      "process without a state file (an orphan)");
  common(status_cmd, false);
  status_cmd->add_flag("--json", o->json, "Print contend.emu-status/1 JSON");
  auto host = add_emu_host_command(*emu);
  auto predict = add_emu_predict_command(*emu);
  return [o, up_cmd, play_cmd, down_cmd, status_cmd, host, predict] {
    for (const auto& other : {host, predict}) {
      if (const int rc = other(); rc >= 0) {
        return rc;
      }
    }
    if (up_cmd->parsed()) {
      return up(*o);
    }
    if (play_cmd->parsed()) {
      return play_command(*o);
    }
    if (down_cmd->parsed()) {
      return down(*o);
    }
    if (status_cmd->parsed()) {
      return status(*o);
    }
    return 2;
  };
}

}  // namespace contend::tools
