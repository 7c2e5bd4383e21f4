#pragma once
// The flow-level model's state at a time of the timeline, shared by the prediction at one time
// (fabric_flows.cpp) and the replay of the whole timeline with its closed-loop jobs
// (fabric_replay.cpp).

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "contend/emulator/scenario/fabric_flows.h"

namespace contend::emulator::detail {

// The network and the flows as the timeline left them.
struct FabricState {
  std::map<std::string, double> rate_bps;  // by link
  std::set<std::string> down;
  std::vector<FlowSpec> flows;  // running, in start order
  int network = 0;              // counts the changes of rates and link states
};

// What a replay keeps from one prediction to the next: each stream's path while no link changes
// state (a flow's name stands for its endpoints), and the ports' names.
struct FabricCache {
  std::set<std::string> down;  // the links down when `paths` were found
  std::unordered_map<std::string, std::vector<std::vector<std::size_t>>> paths;  // per flow, per stream
  std::vector<std::string> port_names;                                           // by port number
  std::vector<double> capacity;  // each port's goodput, for the state's `network`
  int network = -1;
  bool rates_only = false;  // predictions of the flows' rates alone (predict_run without a timeline)
};

FabricState initial_state(const Scenario& s);
// `e` applied to `st`; whether it changed what the flows get (a stall does not).
bool apply(FabricState& st, const Event& e);
// Every flow of `st` (and of `more`, after them) routed and shared max-min at `at_s`. Without a
// cache, the prediction holds every port; with one (a replay's), only the ports a stream crosses.
FabricPrediction predict_state(const Scenario& s, const FabricState& st, double at_s, FabricCache* cache = nullptr,
                               const std::vector<const FlowSpec*>& more = {});

}  // namespace contend::emulator::detail
