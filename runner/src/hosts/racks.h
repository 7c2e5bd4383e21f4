#pragma once
// A fabric scenario on cluster hosts (hosts.h): the inventory's racks stand for the fabric's
// leaves, so the scenario's placement rule picks real hosts. The racks are the groups under
// `nodes` (ansible-inventory's view of the inventory, every rack's hosts in the inventory's
// order); the scenario's leaves (the switch each host's first link joins) are taken in the order of
// their first host's link, and a leaf's hosts in the order of their links (a generator's h0, h1, ...):
// leaf i is rack i, host by host. Pure except read_racks; thread-safe.

#include <map>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::runner {

struct Racks {
  std::vector<std::string> names;               // the groups under `nodes`, in the inventory's order
  std::vector<std::vector<std::string>> hosts;  // hosts[i]: rack i's hosts, in the inventory's order
};

// Parses `ansible-inventory --list`'s JSON (its groups' "children" and "hosts"). Errors
// (kInvalidArgument, naming `source`): not that JSON, no `nodes` group, `nodes` without groups
// under it, a host of `nodes` in no rack or in two, a rack without hosts.
Result<Racks> parse_racks(const std::string& text, const std::string& source);

// Runs `ansible-inventory -i INVENTORY --list` and parses its answer; kNotFound without the
// inventory or ansible-inventory, kIo with its output when it fails.
Result<Racks> read_racks(const std::string& inventory);

// The inventory host that stands for each host of `s`'s fabric (scenario host -> inventory
// host). kInvalidArgument naming the leaf and the rack when the counts of leaves and racks, or of
// a leaf's and its rack's hosts, differ.
Result<std::map<std::string, std::string>> hosts_on_racks(const emulator::Scenario& s, const Racks& racks,
                                                          const std::string& inventory);

}  // namespace contend::runner
