#include "truth/fabric_network.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "contend/emulator/scenario/fabric_flows.h"

namespace contend::runner::detail {
namespace {

// The name of the pipeline's stream from rank a to rank b: '#' is in no flow's name.
std::string stream_name(int a, int b) {
  return "#rank" + std::to_string(a) + ">" + std::to_string(b);
}

// `s` with the pipeline's stream from rank a to rank b running from time 0.
emulator::Scenario with_stream(const emulator::Scenario& s, int a, int b) {
  emulator::Scenario out = s;
  emulator::FlowSpec f;
  f.name = stream_name(a, b);
  f.from = s.nodes[static_cast<std::size_t>(a)];
  f.to = s.nodes[static_cast<std::size_t>(b)];
  out.events.insert(out.events.begin(), emulator::Event{0.0, emulator::FlowStart{f}, "the pipeline"});
  return out;
}

// A way's path at time 0: each port it crosses with what the background flows leave of it, and
// its own rate.
struct Path {
  std::map<std::string, double> room_bps;  // by port
  double rate_bps = 0;
};

// The goodput of the pipeline's stream a -> b over the run beside the background flows, and its
// path at time 0.
Result<RateTrace> stream_trace(const emulator::Scenario& s, int a, int b, Path& path) {
  const std::string name = stream_name(a, b);
  const emulator::PredictedRun run = emulator::predict_watching(with_stream(s, a, b), {name});
  const emulator::FabricPrediction& first = run.timeline.front();
  const auto it = std::find_if(first.flows.begin(), first.flows.end(),
                               [&](const emulator::PredictedFlow& f) { return f.name == name; });
  if (it != first.flows.end()) {
    path.rate_bps = it->rate_bps;
    for (const std::string& port : it->ports) {
      const emulator::PortLoad& load = first.ports.at(port);
      path.room_bps[port] = load.capacity_bps - (load.load_bps - it->rate_bps);
    }
  }
  std::vector<RateTrace::Point> points;
  for (const auto& [at_s, bps] : run.rates.at(name)) {
    points.push_back({at_s, bps});
  }
  return RateTrace::from_points(std::move(points));
}

// Each way's ports that the ways crossing them cannot all cross at their rates at once (a host's
// NIC that its sends to two neighbours cross; an uplink narrower than the ways on it), numbered
// into `net`, with how many of them fit at once (the port's room over the fastest one's rate).
void share_ports(const std::map<std::pair<int, int>, Path>& paths, ScenarioNetwork& net) {
  std::map<std::string, double> wanted, room, fastest;
  for (const auto& [way, path] : paths) {
    for (const auto& [port, bps] : path.room_bps) {
      wanted[port] += path.rate_bps;
      fastest[port] = std::max(fastest[port], path.rate_bps);
      const auto [it, first] = room.try_emplace(port, bps);
      it->second = std::min(it->second, bps);
    }
  }
  std::map<std::string, int> number;
  for (const auto& [way, path] : paths) {
    for (const auto& [port, bps] : path.room_bps) {
      if (wanted[port] <= room[port] * (1 + 1e-9)) {
        continue;
      }
      const auto [it, added] = number.emplace(port, static_cast<int>(number.size()));
      net.shared_ports[way].push_back(it->second);
      if (added && fastest[port] > 0) {
        const auto fit = static_cast<int>(std::floor(room[port] / fastest[port] * (1 + 1e-9)));
        if (fit > 1) {
          net.port_slots[it->second] = fit;
        }
      }
    }
  }
}

// "ranks a and b (h1, h4)".
std::string ranks_named(const emulator::Scenario& s, int a, int b) {
  return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " (" + s.nodes[static_cast<std::size_t>(a)] +
         ", " + s.nodes[static_cast<std::size_t>(b)] + ")";
}

// Whether every path between ranks a and b, both ways, crosses `link` (true) or none does (false);
// refused when only some do (ECMP's hash would decide) or one way's paths do and the other's not.
Result<bool> pair_crosses(const emulator::Scenario& s, int a, int b, const std::string& link) {
  const std::string& from = s.nodes[static_cast<std::size_t>(a)];
  const std::string& to = s.nodes[static_cast<std::size_t>(b)];
  const auto there = emulator::paths_cross(s, from, to, link);
  const auto back = emulator::paths_cross(s, to, from, link);
  const std::string stalled = s.source + ": link \"" + link + "\" is stalled, and ";
  if (there == emulator::PathCrossing::kSome || back == emulator::PathCrossing::kSome) {
    return make_error(Errc::kInvalidArgument, stalled + "only some of the paths between " + ranks_named(s, a, b) +
                                                  " cross it (ECMP's hash picks one): stall a link that every " +
                                                  "path between them crosses (a host's) or none");
  }
  if (there != back) {
    return make_error(Errc::kInvalidArgument, stalled + "the paths between " + ranks_named(s, a, b) +
                                                  " cross it one way only (their hosts' NICs differ each way): " +
                                                  "a stall holds a pair's messages both ways");
  }
  return there == emulator::PathCrossing::kEvery;
}

// Each pair's stalls: those of the stalled link that every path between the two ranks crosses (a
// stall holds each message of the pair, both ways, as on a chain's link). Refused besides
// pair_crosses': a stalled link no pair crosses (it would stall nothing), a pair whose paths
// cross two stalled links, and stalls beside a link going down or up after time 0 (the pairs
// are placed by the paths at time 0; rerouted traffic would cross a stall no pair waits).
Result<PipelineStalls> stall_pairs(const emulator::Scenario& s, const std::vector<std::pair<int, int>>& pairs) {
  const auto moved = std::find_if(s.events.begin(), s.events.end(), [](const emulator::Event& e) {
    return e.at_s > 0 && std::holds_alternative<emulator::SetLinkState>(e.action);
  });
  if (moved != s.events.end() && s.has_stalls()) {
    return make_error(Errc::kInvalidArgument, s.source + ": " + moved->origin +
                                                  " takes a link down or up, and links are stalled: a stall is put " +
                                                  "on the pairs of ranks whose paths cross it at time 0, and a " +
                                                  "reroute would move them; stall or reroute, not both");
  }
  PipelineStalls out;
  std::map<std::pair<int, int>, std::string> stalled_by;
  for (auto& [link, schedule] : link_stalls(s)) {
    bool any = false;
    for (const auto& [a, b] : pairs) {
      auto crosses = pair_crosses(s, a, b, link);
      if (!crosses) {
        return crosses.error();
      }
      if (!*crosses) {
        continue;
      }
      if (const auto [it, added] = stalled_by.emplace(std::pair{a, b}, link); !added) {
        return make_error(Errc::kInvalidArgument, s.source + ": the paths between " + ranks_named(s, a, b) +
                                                      " cross two stalled links, \"" + it->second + "\" and \"" + link +
                                                      "\": a pair of ranks waits one link's stalls");
      }
      out.insert_or_assign({a, b}, schedule);
      any = true;
    }
    if (!any) {
      return make_error(Errc::kInvalidArgument, s.source + ": link \"" + link +
                                                    "\" is stalled, and no two neighbouring ranks' paths cross " +
                                                    "it (the ranks run on " + std::to_string(s.rank_hosts()) +
                                                    " placed hosts): the stall would change nothing");
    }
  }
  return out;
}

// The pairs of ranks that exchange messages: neighbours, and the first and last (a looped
// schedule's).
std::vector<std::pair<int, int>> rank_pairs(const emulator::Scenario& s) {
  const int p = static_cast<int>(s.rank_hosts());
  std::vector<std::pair<int, int>> pairs;
  for (int r = 0; r + 1 < p; ++r) {
    pairs.emplace_back(r, r + 1);
  }
  if (p > 2) {
    pairs.emplace_back(0, p - 1);
  }
  return pairs;
}

}  // namespace

Result<PipelineStalls> fabric_stalls(const emulator::Scenario& s) {
  return stall_pairs(s, rank_pairs(s));
}

Result<ScenarioNetwork> fabric_network(const emulator::Scenario& s) {
  const int p = static_cast<int>(s.rank_hosts());
  const std::vector<std::pair<int, int>> pairs = rank_pairs(s);
  ScenarioNetwork net;
  std::map<std::pair<int, int>, Path> paths;
  for (const auto& [a, b] : pairs) {
    auto up = stream_trace(s, a, b, paths[{a, b}]);
    auto down = stream_trace(s, b, a, paths[{b, a}]);
    if (!up || !down) {
      return !up ? up.error() : down.error();
    }
    net.links.insert_or_assign({a, b}, std::move(*up));
    net.back.insert_or_assign({a, b}, std::move(*down));
  }
  // The chain's ways share ports with one another; a looped schedule's pair (0, p-1) is left out
  // (it would hold ports that the other schedules never use).
  if (p > 2) {
    paths.erase({0, p - 1});
    paths.erase({p - 1, 0});
  }
  auto stalls = stall_pairs(s, pairs);
  if (!stalls) {
    return stalls.error();
  }
  net.stalls = std::move(*stalls);
  share_ports(paths, net);
  for (const auto& [way, path] : paths) {
    for (const auto& [port, room] : path.room_bps) {
      net.crossed_ports.insert(port);
    }
  }
  return net;
}

}  // namespace contend::runner::detail
