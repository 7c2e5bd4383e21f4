#pragma once
// Private: where a workload's ranks run on a fabric ("placement"), and where another tenant's
// traffic runs (patterns/traffic.cpp): a list of hosts, or a rule (pack, spread, random) that
// orders the hosts no background flow uses. The scenario's nodes are put in rank order, the
// placed hosts first (docs/scenario-format.md#placement).

#include <cstdint>
#include <string>
#include <vector>

#include "contend/common/json_reader.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator::detail {

// Reads r's "placement" into `s` (its timeline parsed already: a rule leaves flows' hosts out):
// s.nodes reordered, the placed hosts first, s.placed their number. Without "placement" a fabric
// places every host in file order. Errors name the place: a switch or an unknown host in the
// list, a host twice, an unknown rule, a placement where there is no fabric, no host free.
Result<void> parse_placement(const JsonReader& r, Scenario& s);

struct PlacementRule {
  std::string name;  // "pack", "spread" or "random"
  std::uint64_t seed = 0;
};

// The rule at `p`: "pack", or {"rule": "random", "seed": 7} (the seed defaulting to `seed`).
Result<PlacementRule> parse_placement_rule(const JsonReader& p, std::uint64_t seed);

// The hosts of `s` that no flow of `events` starts or ends on, in the order `rule` fills them.
std::vector<std::string> hosts_by_rule(const Scenario& s, const std::vector<Event>& events, const PlacementRule& rule);

// The hosts the array `list` names, checked: each a host of `s` (not a switch), once; `what`
// runs on them ("ranks", "flows": for the errors).
Result<std::vector<std::string>> listed_hosts(const JsonReader& list, const Scenario& s, const std::string& what);

}  // namespace contend::emulator::detail
