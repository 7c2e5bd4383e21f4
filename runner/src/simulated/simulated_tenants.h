#pragma once
// The other tenants of a simulated cell on a fabric, as a real cell's player reports them. Private
// to the runner. Pure.

#include <vector>

#include "contend/emulator/scenario/scenario.h"
#include "contend/runner/simulated/simulate.h"
#include "nlohmann/json.hpp"

namespace contend::runner {

// The scenario's flows replayed at the flow level (emulator::predict_run) until the cell's end,
// beside the pipeline's ways, each a flow paced at its mean rate in the cell's last iteration (a
// rank's bytes over the iteration, split evenly between the neighbours it sends to): one
// flow_summary line per flow as the player writes them (`achieved_bps` over the time the flow was
// on; a closed-loop flow's job's `iterations` and median `iteration_s`), with "simulated": true.
// Empty for a chain scenario (its links share under preemption policies, not the fabric's model)
// and for one without flows.
std::vector<nlohmann::ordered_json> simulated_flow_summaries(const emulator::Scenario& s, const SimCell& cell);

}  // namespace contend::runner
