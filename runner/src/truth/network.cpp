#include "contend/runner/truth/network.h"

#include <algorithm>
#include <map>

#include "contend/emulator/net/htb_params.h"

namespace contend::runner {
namespace {

// The goodput the pipeline's TCP gets on `link` from node `from` to node `to` over the scenario's
// clock: its rate as the timeline sets it, less what the background flows sent that way take
// under its preemption policy (a flow the other way leaves this way alone but for its TCP acks,
// about 1/30 of its rate, not counted). A way the link's `direction` leaves unshaped crosses as
// the unshaped switch does: no limit.
Result<RateTrace> link_goodput(const emulator::Scenario& s, const emulator::LinkSpec& link, const std::string& from,
                               const std::string& to) {
  const bool forward = from == link.from;
  if ((forward && link.direction == emulator::Direction::kBackward) ||
      (!forward && link.direction == emulator::Direction::kForward)) {
    return RateTrace::unlimited();
  }
  double rate = link.rate_bps;
  std::map<std::string, double> flows;  // running on this link this way, by name
  const auto on_link = [&](const emulator::FlowSpec& f) { return f.from == from && f.to == to; };
  const auto current = [&] {
    double total = 0;
    bool unpaced = false;
    for (const auto& [name, bps] : flows) {
      total += bps;
      unpaced = unpaced || bps <= 0;
    }
    return kTcpGoodput * emulator::workload_rate_bps(link, rate, unpaced ? 0 : total, !flows.empty());
  };
  std::vector<RateTrace::Point> points{{0.0, current()}};
  for (const auto& e : s.events) {
    if (e.kind == emulator::Event::Kind::kSetRate && e.link == link.name) {
      rate = e.rate_bps;
    } else if (e.kind == emulator::Event::Kind::kFlowStart && on_link(e.flow)) {
      flows[e.flow.name] = e.flow.rate_bps * e.flow.streams;
    } else if (e.kind == emulator::Event::Kind::kFlowStop && on_link(e.flow)) {
      flows.erase(e.flow.name);
    } else {
      continue;
    }
    if (e.at_s <= points.back().time_s) {
      points.back().rate_bps = current();
    } else {
      points.push_back({e.at_s, current()});
    }
  }
  return RateTrace::from_points(std::move(points));
}

}  // namespace

Result<std::vector<RateTrace>> workload_rates(const emulator::Scenario& s) {
  auto all = pipeline_links(s);
  if (!all) {
    return all.error();
  }
  return chain_rates(s, *all);
}

Result<std::vector<RateTrace>> chain_rates(const emulator::Scenario& s, const PipelineLinks& all) {
  auto chain = chain_of(all, static_cast<int>(s.nodes.size()));
  if (!chain) {
    return with_context(chain.error(), s.source);
  }
  return chain;
}

Result<std::vector<RateTrace>> chain_of(const PipelineLinks& all, int stages) {
  std::vector<RateTrace> out;
  for (int r = 0; r + 1 < stages; ++r) {
    auto it = all.find({r, r + 1});
    if (it == all.end()) {
      return make_error(Errc::kInvalidArgument, "no link between the nodes of ranks " + std::to_string(r) + " and " +
                                                    std::to_string(r + 1) + ": a pipeline runs over a chain of links");
    }
    out.push_back(it->second);
  }
  return out;
}

PipelineStalls pipeline_stalls(const emulator::Scenario& s) {
  PipelineStalls out;
  for (const auto& link : s.links) {
    StallSchedule schedule;
    bool any = false;
    for (const auto* events : {&s.events, &s.iteration_events}) {
      for (const emulator::Event& e : *events) {
        if (e.kind != emulator::Event::Kind::kSetStall || e.link != link.name) {
          continue;
        }
        any = true;
        if (e.at_iteration >= 0) {
          schedule.add_at_iteration(e.at_iteration, e.stall_s);
        } else {
          schedule.add_at_time(e.at_s, e.stall_s);
        }
      }
    }
    if (any) {
      const int a = s.node_index(link.from);
      const int b = s.node_index(link.to);
      out.insert_or_assign({std::min(a, b), std::max(a, b)}, std::move(schedule));
    }
  }
  return out;
}

Result<ScenarioNetwork> scenario_network(const emulator::Scenario& s) {
  auto links = pipeline_links(s);
  auto back = pipeline_links(s, true);
  if (!links || !back) {
    return !links ? links.error() : back.error();
  }
  ScenarioNetwork out{std::move(*links), pipeline_stalls(s)};
  out.back = std::move(*back);
  return out;
}

PipelineLinks back_links(const ScenarioNetwork& net) {
  PipelineLinks out = net.links;
  for (const auto& [pair, trace] : net.back) {
    out.insert_or_assign(pair, trace);
  }
  return out;
}

Result<PipelineLinks> pipeline_links(const emulator::Scenario& s, bool back) {
  PipelineLinks out;
  for (const auto& link : s.links) {
    const int a = s.node_index(link.from);
    const int b = s.node_index(link.to);
    const std::string& lower = a < b ? link.from : link.to;
    const std::string& higher = a < b ? link.to : link.from;
    auto trace = back ? link_goodput(s, link, higher, lower) : link_goodput(s, link, lower, higher);
    if (!trace) {
      return trace.error();
    }
    out.insert_or_assign({std::min(a, b), std::max(a, b)}, std::move(*trace));
  }
  return out;
}

std::uint64_t shaper_burst_bytes(double goodput_bps) {
  return emulator::burst_bytes_for(goodput_bps / kTcpGoodput);
}

}  // namespace contend::runner
