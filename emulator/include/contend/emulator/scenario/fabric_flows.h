#pragma once
// A fabric's flows at the flow level, without root or namespaces (`contend emu predict`): the
// network as the scenario has it at a time (rates set, links down, flows running), each TCP
// stream's path, and every stream's max-min fair share of the ports it crosses. Pure.
//
// The model, stated: a stream leaves its host by the host's first NIC and reaches the other
// host's NIC on the same switch where it has one (the same rail), else its first, as background
// flows do (flow_engine.h: from the topology alone, so a flow whose NIC's link is down is
// unroutable, as it is on the emulator); it takes a shortest path through switches (hosts never forward), each
// switch choosing among its equal-cost next hops by a hash of the stream (flow name, stream
// index) and the switch's name: the same stream takes the same path in every prediction, and
// streams spread over equal-cost paths as evenly as ECMP spreads them, but which path a given
// stream takes is not the kernel's choice (its hash is of the real 5-tuple, ports drawn at
// connect). Each port (a shaped end's egress) carries TCP goodput up to 0.956 x its rate; the
// rates are max-min fair (progressive filling), each stream held to its flow's pacing share.

#include <map>
#include <string>
#include <vector>

#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

// TCP's goodput over a shaped rate (docs/emulator.md, "Measured here").
inline constexpr double kFabricGoodput = 0.956;

struct PredictedFlow {
  std::string name;
  std::string from;
  std::string to;
  int streams = 1;
  double rate_bps = 0;             // goodput, all streams together
  std::vector<std::string> ports;  // every port a stream crossed, "<link>@<node>", in path order
  std::string bottleneck;          // the port that held its slowest stream ("" when its pacing did)
};

struct PortLoad {
  double capacity_bps = 0;  // goodput the port carries at its rate (0: the link is down)
  double load_bps = 0;      // what the flows put through it
  int streams = 0;
};

struct FabricPrediction {
  double at_s = 0;
  std::vector<PredictedFlow> flows;       // every flow running at at_s, in start order
  std::map<std::string, PortLoad> ports;  // every port, "<link>@<node>"
  std::vector<std::string> unroutable;    // flows no path joins at at_s (a link down), by name
};

// The scenario's network at `at_s` (rates and link states as its timeline left them, flows started
// and not stopped), every flow's streams routed and shared max-min. A flow between hosts that a
// link joins directly crosses that link; elsewhere, the fabric.
FabricPrediction predict_flows(const Scenario& s, double at_s);

// predict_flows at 0 and at every later time of the timeline (before its duration) when the
// network or the flows change, in time order: what the flows get over the whole run, replayed once.
std::vector<FabricPrediction> predict_timeline(const Scenario& s);

}  // namespace contend::emulator
