#pragma once
// The ground truth of a scenario's network as the workload sees it, from the scenario's own
// timeline (never measured): the goodput the pipeline's TCP gets on each link over scenario time
// and each link's stalls; the simulator's network (simulated/simulate.h), the oracle's input and
// the stalls the workers' transports apply (the truth file). Pure (but the truth file's reading
// and writing); thread-safe.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contend/common/rate_trace.h"
#include "contend/common/result.h"
#include "contend/common/stall_schedule.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::runner {

// TCP payload per byte on the wire with 1500-byte frames: 1448 of 1514 bytes (measured here at
// exactly this ratio of the shaped rate, docs/emulator.md).
inline constexpr double kTcpGoodput = 1448.0 / 1514.0;

// One trace per link between consecutive nodes (p - 1 of them), from the lower node to the higher
// (the activations' way). A background flow on a link takes what its preemption policy gives it
// (background-first: its rate, all of it when unpaced; fair: up to half; split: the background
// share), in its own direction only: each end shapes what it sends. kInvalidArgument when
// consecutive nodes have no link.
Result<std::vector<RateTrace>> workload_rates(const emulator::Scenario& scenario);

// The goodput between every pair of nodes a scenario link joins, by node index (a < b), computed as
// workload_rates does: the simulated network of any schedule, a looped one's ring included (pairs
// no link joins cross the unshaped switch: no limit). On a fabric, every pair of neighbouring
// ranks and the first and last, from the fabric's flow-level model with the pipeline's own
// stream of that way in it and a closed-loop job's flows there while they send (the timeline
// replayed, emulator/scenario/fabric_flows.h).
// `back`: the other way, from the higher node to the lower (the gradients'), which background
// flows from b to a take from.
using PipelineLinks = std::map<std::pair<int, int>, RateTrace>;
Result<PipelineLinks> pipeline_links(const emulator::Scenario& scenario, bool back = false);
// workload_rates from the scenario's pipeline_links, computed already.
Result<std::vector<RateTrace>> chain_rates(const emulator::Scenario& scenario, const PipelineLinks& links);
// The links r -> r+1 of a pipeline of `stages`; kInvalidArgument naming the ranks no link joins.
Result<std::vector<RateTrace>> chain_of(const PipelineLinks& links, int stages);

// Every stalled link's stall schedule, by its name: the scenario's SetStall events, at their
// times and from their iterations.
std::map<std::string, StallSchedule> link_stalls(const emulator::Scenario& scenario);
// The same by the node indices each link joins (a < b): a chain's pairs of ranks.
using PipelineStalls = std::map<std::pair<int, int>, StallSchedule>;
PipelineStalls pipeline_stalls(const emulator::Scenario& scenario);
// The stalls each pair of ranks waits (a < b): a chain's pipeline_stalls; on a fabric, every
// stalled link's on the pairs whose paths all cross it, or why a stall cannot be placed so (only
// some of a pair's paths cross it, two stalled links on one pair's, a link no pair crosses).
Result<PipelineStalls> scenario_stalls(const emulator::Scenario& scenario);

// What the simulator runs a scenario's cells on: every linked pair's goodput (both ways alike
// unless `back` has the pair) and every stalled pair's stalls (a chain's stalled links; on a
// fabric, the pairs whose paths all cross a stalled link). A network of rates alone converts.
struct ScenarioNetwork {
  ScenarioNetwork() = default;
  ScenarioNetwork(PipelineLinks l, PipelineStalls s = {}) : links(std::move(l)), stalls(std::move(s)) {}  // NOLINT
  PipelineLinks links;  // from the lower node to the higher
  PipelineLinks back;   // from the higher node to the lower, where it differs
  PipelineStalls stalls;
  // On a fabric, the ports each way (from rank, to rank) shares with the pipeline's other ways,
  // numbered: the simulator lets a port hold as many transfers at once as fit at their rates (a
  // rank's NIC: one; an uplink: its room over the fastest way's rate).
  std::map<std::pair<int, int>, std::vector<int>> shared_ports{};
  // How many of its ways each shared port carries at once at their rates (an uplink twice a NIC's
  // rate: two); absent: one.
  std::map<int, int> port_slots{};
  // On a fabric, every port ("<link>@<node>") the chain's ways cross (the report marks them).
  std::set<std::string> crossed_ports{};
  // A closed-loop job's flow (Scenario::closed_loop_flow) that the rates above take as a stream (a
  // chain scenario's; a fabric's model replays the job's iterations, emulator::predict_run), so the
  // simulator refuses the scenario; "" when there is none.
  std::string closed_loop{};
};
Result<ScenarioNetwork> scenario_network(const emulator::Scenario& scenario);
// Every linked pair's other way (from the higher node to the lower): `back` where it has the
// pair, else `links`.
PipelineLinks back_links(const ScenarioNetwork& network);

// A scenario's network as the workers are told it, resolved once by the runner (schema
// contend.truth/1, docs/experiment-format.md, "The results folder"): the workload's goodput on each
// chain link (workload_rates; the oracle's), the same the other way (`back`, optional: as
// `links` when absent), and every stalled link's stalls (the transports'):
//   {"schema": "contend.truth/1", "scenario": "periodic", "links": [[[0, 956e6], [2, 95.6e6]], ...],
//    "back": [[[0, 956e6]], ...],
//    "stalls": [{"nodes": [6, 7], "at_time": [[0, 0.03]], "at_iteration": [[15, 0.03], [85, 0]]}]}
// At most kMaxTracePoints points in all. Errors name the file and the JSON pointer.
struct NetworkTruth {
  std::vector<RateTrace> links;
  PipelineStalls stalls;
  std::vector<RateTrace> back{};  // empty: as links
};
Result<void> write_truth(const std::string& path, const std::string& scenario, const NetworkTruth& truth);
Result<NetworkTruth> read_truth(const std::string& path);

// The HTB/TBF burst the emulator gives a link whose workload goodput is `goodput_bps`.
std::uint64_t shaper_burst_bytes(double goodput_bps);

}  // namespace contend::runner
