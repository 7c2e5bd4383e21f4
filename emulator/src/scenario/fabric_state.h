#pragma once
// The flow-level model's state at a time of the timeline, shared by the prediction at one time
// (fabric_flows.cpp) and the replay of the whole timeline with its closed-loop jobs
// (fabric_replay.cpp).

#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "contend/emulator/scenario/fabric_flows.h"
#include "scenario/max_min.h"

namespace contend::emulator::detail {

// The network and the flows as the timeline left them.
struct FabricState {
  std::map<std::string, double> rate_bps;  // by link
  std::set<std::string> down;
  std::vector<FlowSpec> flows;  // running, in start order
  int network = 0;              // counts the changes of rates and link states
};

// A flow as a replay's predictions left it: its streams' paths while no link changes state (a
// flow's name stands for its endpoints), and their shares at the last prediction that had it.
struct CachedFlow {
  std::string name;
  std::deque<std::vector<std::size_t>> paths;  // per stream (a deque: streams point at them as more are added)
  std::vector<double> rates;                   // per stream
  std::vector<std::size_t> bottlenecks;        // per stream: a port, or none
  double cap_bps = 0;                          // each stream's pacing share
  long seen = -1;                              // the last prediction that had it
};

// What a replay keeps from one prediction to the next: its flows (the shares that hold need not
// be found again), and the ports' names.
struct FabricCache {
  std::set<std::string> down;                           // the links down when the flows' paths were found
  std::unordered_map<std::string, CachedFlow> flows;    // by name
  std::unordered_map<const FlowSpec*, CachedFlow*> at;  // by where the flow was last given, while its name matches
  std::vector<CachedFlow*> last;                        // the last prediction's, in its order
  long predictions = 0;
  bool resume = true;  // false: every prediction shared afresh (the reference resumed ones are held to)
  SharingSpace sharing;
  std::vector<std::string> port_names;  // by port number
  std::vector<double> capacity;         // each port's goodput, for the state's `network`
  int network = -1;
};

FabricState initial_state(const Scenario& s);
// `e` applied to `st`; whether it changed what the flows get (a stall does not).
bool apply(FabricState& st, const Event& e);
// Every flow of `st` (and of `more`, after them) routed and shared max-min at `at_s`. Without a
// cache, the prediction holds every port; with one (a replay's), only the ports a stream crosses.
// `rates`, when given: each flow's rate in that order (as predict_rates).
FabricPrediction predict_state(const Scenario& s, const FabricState& st, double at_s, FabricCache* cache = nullptr,
                               const std::vector<const FlowSpec*>& more = {}, std::vector<double>* rates = nullptr);
// What a replay keeps besides the jobs and the bits: every prediction whole (`timeline`), or the
// first one and the rates of the open-loop flows `watched`, or neither.
struct Keep {
  bool timeline = false;
  std::vector<std::string> watched;
};
// The replay of predict_run and predict_watching, with `cache` (a fresh one: its `resume` says how
// the predictions share).
PredictedRun replay(const Scenario& s, const Keep& keep, FabricCache& cache);
// The same flows' rates alone, in their order (st's flows, then `more`; 0 where no path joins a
// flow's hosts): what a replay without a timeline needs, several times faster.
std::vector<double> predict_rates(const Scenario& s, const FabricState& st, FabricCache& cache,
                                  const std::vector<const FlowSpec*>& more);

}  // namespace contend::emulator::detail
