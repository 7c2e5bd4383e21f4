#pragma once
// Private: where a workload's ranks run on a fabric ("placement"): a list of hosts, or a rule
// (pack, spread, random) that orders the hosts no background flow uses. The scenario's nodes are
// put in rank order, the placed hosts first (docs/scenario-format.md#placement).

#include "contend/common/json_reader.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator::detail {

// Reads r's "placement" into `s` (its timeline parsed already: a rule leaves flows' hosts out):
// s.nodes reordered, the placed hosts first, s.placed their number. Without "placement" a fabric
// places every host in file order. Errors name the place: a switch or an unknown host in the
// list, a host twice, an unknown rule, a placement where there is no fabric, no host free.
Result<void> parse_placement(const JsonReader& r, Scenario& s);

}  // namespace contend::emulator::detail
