#pragma once
// The flow-level model's state at a time of the timeline, shared by the prediction at one time
// (fabric_flows.cpp) and the replay of the whole timeline with its closed-loop jobs
// (fabric_replay.cpp).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "contend/emulator/scenario/fabric_flows.h"

namespace contend::emulator::detail {

// The network and the flows as the timeline left them.
struct FabricState {
  std::map<std::string, double> rate_bps;  // by link
  std::set<std::string> down;
  std::vector<FlowSpec> flows;  // running, in start order
};

FabricState initial_state(const Scenario& s);
// `e` applied to `st`; whether it changed what the flows get (a stall does not).
bool apply(FabricState& st, const Event& e);
// Every flow of `st` routed and shared max-min at `at_s`.
FabricPrediction predict_state(const Scenario& s, const FabricState& st, double at_s);

}  // namespace contend::emulator::detail
