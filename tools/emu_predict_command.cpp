#include "emu_predict_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli_units.h"
#include "commands.h"
#include "contend/common/json.h"
#include "contend/common/median.h"
#include "contend/common/records.h"
#include "contend/common/units.h"
#include "contend/emulator/scenario/fabric_flows.h"

namespace contend::tools {
namespace {

using namespace contend::emulator;

struct PredictOptions {
  std::string scenario;
  std::string at = "0s";
  std::string json;  // "-" for stdout
  int top = 10;
};

nlohmann::ordered_json prediction_json(const FabricPrediction& p, const Scenario& s, double took_s) {
  nlohmann::ordered_json doc = json_document("fabric-prediction", 1);
  doc["scenario"] = s.source;
  doc["at_s"] = p.at_s;
  doc["took_s"] = took_s;
  auto flows = nlohmann::ordered_json::array();
  for (const PredictedFlow& f : p.flows) {
    flows.push_back({{"flow", f.name},
                     {"from", f.from},
                     {"to", f.to},
                     {"streams", f.streams},
                     {"rate_bps", f.rate_bps},
                     {"bottleneck", f.bottleneck},
                     {"ports", f.ports}});
  }
  doc["flows"] = flows;
  auto ports = nlohmann::ordered_json::array();
  for (const auto& [name, load] : p.ports) {
    ports.push_back(
        {{"port", name}, {"capacity_bps", load.capacity_bps}, {"load_bps", load.load_bps}, {"streams", load.streams}});
  }
  doc["ports"] = ports;
  doc["unroutable"] = p.unroutable;
  return doc;
}

void print_prediction(const FabricPrediction& p, int top, double took_s) {
  std::size_t streams = 0;
  for (const PredictedFlow& f : p.flows) {
    std::printf("%-24s %8s -> %-8s %3d streams %12s  bottleneck %s\n", f.name.c_str(), f.from.c_str(), f.to.c_str(),
                f.streams, format_rate(f.rate_bps).c_str(),
                f.bottleneck.empty() ? "(its pacing)" : f.bottleneck.c_str());
    streams += static_cast<std::size_t>(f.streams);
  }
  std::vector<std::pair<double, std::string>> busiest;
  for (const auto& [name, load] : p.ports) {
    if (load.capacity_bps > 0 && load.streams > 0) {
      busiest.emplace_back(load.load_bps / load.capacity_bps, name);
    }
  }
  std::sort(busiest.rbegin(), busiest.rend());
  busiest.resize(std::min<std::size_t>(busiest.size(), static_cast<std::size_t>(std::max(top, 0))));
  std::printf("busiest ports (load / what the port carries at its rate):\n");
  for (const auto& [utilisation, name] : busiest) {
    std::printf("  %-32s %5.1f%%  %s\n", name.c_str(), 100 * utilisation,
                format_rate(p.ports.at(name).load_bps).c_str());
  }
  for (const std::string& f : p.unroutable) {
    std::printf("flow %s: no path joins its hosts at %s (a link down)\n", f.c_str(), format_seconds(p.at_s).c_str());
  }
  std::printf("%zu flows, %zu streams on %zu ports at %s, predicted in %s\n", p.flows.size(), streams, p.ports.size(),
              format_seconds(p.at_s).c_str(), format_seconds(took_s).c_str());
}

// Each closed-loop job's iterations as the whole run replays them (predict_run): the rates above
// are its flows' while they send.
void print_jobs(const std::vector<PredictedJob>& jobs) {
  for (const PredictedJob& j : jobs) {
    std::printf(
        "job %s: %zu iterations in the run, median %s each (replayed; the rates above are its flows' while "
        "they send)\n",
        j.job.c_str(), j.iterations_s.size(), format_seconds(median(j.iterations_s)).c_str());
  }
}

nlohmann::ordered_json jobs_json(const std::vector<PredictedJob>& jobs) {
  auto out = nlohmann::ordered_json::array();
  for (const PredictedJob& j : jobs) {
    out.push_back({{"job", j.job}, {"iterations", j.iterations_s.size()}, {"iteration_s", median(j.iterations_s)}});
  }
  return out;
}

int predict(const PredictOptions& o) {
  auto s = load_scenario(o.scenario);
  if (!s) {
    return fail("emu predict", s.error().message);
  }
  const auto start = std::chrono::steady_clock::now();
  const FabricPrediction p = predict_flows(*s, to_seconds(*parse_duration(o.at)));
  const std::vector<PredictedJob> jobs =
      s->closed_loop_flow().empty() ? std::vector<PredictedJob>{} : predict_run(*s, false).jobs;
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json.empty()) {
    print_prediction(p, o.top, took);
    print_jobs(jobs);
    return 0;
  }
  nlohmann::ordered_json doc = prediction_json(p, *s, took);
  doc["jobs"] = jobs_json(jobs);
  if (o.json == "-") {
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  if (auto ok = write_json_document(o.json, doc); !ok) {
    return fail("emu predict", ok.error().message);
  }
  return 0;
}

}  // namespace

std::function<int()> add_emu_predict_command(CLI::App& emu) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* cmd = emu.add_subcommand(
      "predict",
      "Predict a scenario's flows without root: each TCP stream's path (shortest paths, a stated ECMP model) and its "
      "max-min share of the ports it crosses, at a time of the timeline, and each closed-loop job's iterations over "
      "the whole run (docs/sim.md#fabrics-at-the-flow-level-contend-emu-predict)");
  cmd->add_option("SCENARIO", o->scenario, "Scenario file (contend.scenario/1)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--at", o->at,
                  "The time of the timeline whose rates, link states and running flows to take "
                  "(default 0s)")
      ->check(duration_check());
  cmd->add_option("--json", o->json, "Write contend.fabric-prediction/1 JSON to FILE (- for stdout)");
  cmd->add_option("--top", o->top, "How many of the busiest ports to list (default 10)");
  return [o, cmd] { return cmd->parsed() ? predict(*o) : -1; };
}

}  // namespace contend::tools
