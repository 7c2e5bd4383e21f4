#include "contend/runner/truth/network.h"

#include <algorithm>
#include <map>

#include "contend/common/overloaded.h"
#include "contend/emulator/net/htb_params.h"
#include "truth/fabric_network.h"

namespace contend::runner {
namespace {

// One way of a link, from node `from` to node `to`, as the timeline changes it: its rate, and the
// background flows sent that way.
class LinkWay {
 public:
  LinkWay(const emulator::LinkSpec& link, std::string from, std::string to)
      : link_(link), from_(std::move(from)), to_(std::move(to)), rate_(link.rate_bps) {}

  // Whether `action` changes what the workload gets this way (and changes it).
  bool apply(const emulator::EventAction& action) {
    return std::visit(Overloaded{[&](const emulator::SetRate& r) {
                                   if (r.link != link_.name) {
                                     return false;
                                   }
                                   rate_ = r.rate_bps;
                                   return true;
                                 },
                                 [](const emulator::SetStall&) {
                                   return false;  // a stall holds messages back, not the rate
                                 },
                                 [&](const emulator::FlowStart& f) {
                                   if (!this_way(f.flow)) {
                                     return false;
                                   }
                                   flows_[f.flow.name] = f.flow.rate_bps * f.flow.streams;
                                   return true;
                                 },
                                 [&](const emulator::FlowStop& f) {
                                   if (!this_way(f.flow)) {
                                     return false;
                                   }
                                   flows_.erase(f.flow.name);
                                   return true;
                                 },
                                 [](const emulator::SetLinkState&) {
                                   return false;  // experiments refuse link states (experiment.cpp)
                                 }},
                      action);
  }

  // The workload's goodput this way now: the rate less what the flows take under the link's
  // preemption policy.
  double goodput() const {
    double total = 0;
    bool unpaced = false;
    for (const auto& [name, bps] : flows_) {
      total += bps;
      unpaced = unpaced || bps <= 0;
    }
    return kTcpGoodput * emulator::workload_rate_bps(link_, rate_, unpaced ? 0 : total, !flows_.empty());
  }

 private:
  bool this_way(const emulator::FlowSpec& f) const { return f.from == from_ && f.to == to_; }

  const emulator::LinkSpec& link_;
  std::string from_;
  std::string to_;
  double rate_;
  std::map<std::string, double> flows_;  // running this way, by name
};

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
  LinkWay way(link, from, to);
  std::vector<RateTrace::Point> points{{0.0, way.goodput()}};
  for (const auto& e : s.events) {
    if (!way.apply(e.action)) {
      continue;
    }
    if (e.at_s <= points.back().time_s) {
      points.back().rate_bps = way.goodput();
    } else {
      points.push_back({e.at_s, way.goodput()});
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
  auto chain = chain_of(all, static_cast<int>(s.rank_hosts()));
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

std::map<std::string, StallSchedule> link_stalls(const emulator::Scenario& s) {
  std::map<std::string, StallSchedule> out;
  for (const auto* events : {&s.events, &s.iteration_events}) {
    for (const emulator::Event& e : *events) {
      const auto* stall = std::get_if<emulator::SetStall>(&e.action);
      if (stall == nullptr) {
        continue;
      }
      if (stall->at_iteration >= 0) {
        out[stall->link].add_at_iteration(stall->at_iteration, stall->stall_s);
      } else {
        out[stall->link].add_at_time(e.at_s, stall->stall_s);
      }
    }
  }
  return out;
}

PipelineStalls pipeline_stalls(const emulator::Scenario& s) {
  PipelineStalls out;
  for (auto& [name, schedule] : link_stalls(s)) {
    const auto link = std::find_if(s.links.begin(), s.links.end(), [&](const auto& l) { return l.name == name; });
    if (link != s.links.end()) {
      const int a = s.node_index(link->from);
      const int b = s.node_index(link->to);
      out.insert_or_assign({std::min(a, b), std::max(a, b)}, std::move(schedule));
    }
  }
  return out;
}

Result<PipelineStalls> scenario_stalls(const emulator::Scenario& s) {
  if (s.has_fabric()) {
    return detail::fabric_stalls(s);
  }
  return pipeline_stalls(s);
}

namespace {

// A scenario of links alone: each linked pair's goodput each way, and the stalls.
Result<ScenarioNetwork> chain_network(const emulator::Scenario& s) {
  auto links = pipeline_links(s);
  auto back = pipeline_links(s, true);
  if (!links || !back) {
    return !links ? links.error() : back.error();
  }
  ScenarioNetwork out{std::move(*links), pipeline_stalls(s)};
  out.back = std::move(*back);
  return out;
}

}  // namespace

Result<ScenarioNetwork> scenario_network(const emulator::Scenario& s) {
  auto out = s.has_fabric() ? detail::fabric_network(s) : chain_network(s);
  if (out && !s.has_fabric()) {
    out->closed_loop = s.closed_loop_flow();  // the fabric's model replays jobs; a chain's takes streams
  }
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
  if (s.has_fabric()) {
    auto net = detail::fabric_network(s);
    if (!net) {
      return net.error();
    }
    return back ? back_links(*net) : net->links;
  }
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
