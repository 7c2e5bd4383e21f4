#include "simulated/simulated_tenants.h"

#include <algorithm>
#include <map>

#include "contend/common/median.h"
#include "contend/emulator/scenario/fabric_flows.h"

namespace contend::runner {
namespace {

// `s` until `end_s`, with each of the pipeline's ways a flow from 0 paced at its mean goodput in
// `last` ('#' is in no scenario flow's name).
emulator::Scenario with_pipeline(const emulator::Scenario& s, const sim::SimResult& last, double end_s) {
  emulator::Scenario out = s;
  out.duration_s = std::min(s.duration_s, end_s);
  const int p = std::min(static_cast<int>(last.ranks.size()), static_cast<int>(s.rank_hosts()));
  std::vector<emulator::Event> ways;
  for (int r = 0; r < p && last.makespan_s > 0; ++r) {
    std::vector<int> to;
    for (int q : {r - 1, r + 1}) {
      if (q >= 0 && q < p) {
        to.push_back(q);
      }
    }
    const double bps = 8.0 * static_cast<double>(last.ranks[static_cast<std::size_t>(r)].bytes_sent) / last.makespan_s /
                       static_cast<double>(std::max<std::size_t>(to.size(), 1));
    for (int q : to) {
      emulator::FlowSpec f;
      f.name = "#rank" + std::to_string(r) + ">" + std::to_string(q);
      f.from = s.nodes[static_cast<std::size_t>(r)];
      f.to = s.nodes[static_cast<std::size_t>(q)];
      f.rate_bps = bps;
      if (bps > 0) {
        ways.push_back(emulator::Event{0.0, emulator::FlowStart{f}, "the pipeline"});
      }
    }
  }
  out.events.insert(out.events.begin(), ways.begin(), ways.end());
  return out;
}

// Each scenario flow's seconds on before `end_s` (from its starts to its stops), in start order.
std::vector<std::pair<emulator::FlowSpec, double>> flows_on(const emulator::Scenario& s, double end_s) {
  std::vector<emulator::FlowSpec> order;
  std::map<std::string, double> on, since;
  const auto stop = [&](const std::string& name, double at) {
    if (const auto it = since.find(name); it != since.end()) {
      on[name] += std::max(0.0, std::min(at, end_s) - it->second);
      since.erase(it);
    }
  };
  for (const emulator::Event& e : s.events) {
    if (const auto* start = std::get_if<emulator::FlowStart>(&e.action); start != nullptr && e.at_s < end_s) {
      stop(start->flow.name, e.at_s);
      since[start->flow.name] = e.at_s;
      if (on.emplace(start->flow.name, 0.0).second) {
        order.push_back(start->flow);
      }
    } else if (const auto* end = std::get_if<emulator::FlowStop>(&e.action)) {
      stop(end->flow.name, e.at_s);
    }
  }
  while (!since.empty()) {
    stop(since.begin()->first, end_s);
  }
  std::vector<std::pair<emulator::FlowSpec, double>> out;
  for (const emulator::FlowSpec& f : order) {
    out.emplace_back(f, on[f.name]);
  }
  return out;
}

}  // namespace

std::vector<nlohmann::ordered_json> simulated_flow_summaries(const emulator::Scenario& s, const SimCell& cell) {
  if (!s.has_fabric() || cell.iterations.empty()) {
    return {};
  }
  const double end_s = cell.iterations.back().start_s + cell.iterations.back().iteration_s;
  const auto flows = flows_on(s, end_s);
  if (flows.empty()) {
    return {};
  }
  const emulator::PredictedRun run = emulator::predict_run(with_pipeline(s, cell.last, end_s), false);
  const auto& bits = run.bits;
  std::vector<nlohmann::ordered_json> out;
  for (const auto& [f, on_s] : flows) {
    const auto got = bits.find(f.name);
    nlohmann::ordered_json line = {{"kind", "flow_summary"},
                                   {"flow", f.name},
                                   {"protocol", emulator::protocol_name(f.protocol)},
                                   {"streams", f.streams},
                                   {"target_bps", f.rate_bps},
                                   {"achieved_bps", on_s > 0 && got != bits.end() ? got->second / on_s : 0.0},
                                   {"active_s", on_s},
                                   {"simulated", true}};
    const auto job = std::find_if(run.jobs.begin(), run.jobs.end(), [&](const emulator::PredictedJob& j) {
      return f.iterate_bytes > 0 && j.job == f.job;
    });
    if (job != run.jobs.end()) {
      line["iterations"] = job->iterations_s.size();
      line["iteration_s"] = median(job->iterations_s);
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace contend::runner
