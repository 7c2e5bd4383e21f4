#pragma once
// Private: the network a workload's ranks see on a fabric (network.h's ScenarioNetwork): every
// pair of neighbouring ranks, and the first and last, their TCP goodput each way over scenario
// time, from the flow-level model of the fabric (fabric_flows.h): each of the pipeline's
// transfers as one stream sharing the ports it crosses max-min with the background flows; and the
// ports the chain's ways cannot all cross at once (a middle rank's NIC), which the simulator lets
// one transfer hold at a time (docs/sim.md, "A pipeline on a fabric": sharing the pipeline's
// streams max-min all the time made the model 0.85 x real, leaving them apart 1.39 x); and the
// stalls of every pair whose paths all cross a stalled link (docs/scenario-format.md, "Stalls").
// Pure.

#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/runner/truth/network.h"

namespace contend::runner::detail {

// s.rank_hosts() ranks on s.nodes in order.
Result<ScenarioNetwork> fabric_network(const emulator::Scenario& s);
// Its stalls alone (ScenarioNetwork::stalls), or why they cannot be placed on pairs of ranks.
Result<PipelineStalls> fabric_stalls(const emulator::Scenario& s);

}  // namespace contend::runner::detail
