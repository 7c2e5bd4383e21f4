#pragma once
// Private: the routes of a fabric (a scenario with switches), computed from its links alone.

#include <set>
#include <vector>

#include "contend/emulator/net/topology.h"

namespace contend::emulator::detail {

// In every namespace, a route to each host address on a link that joins a switch (the host's NIC
// on the fabric), through every neighbour on a shortest path to that switch: several next hops
// make a multipath route, so equal-cost paths share flows (ECMP). Hosts never forward, so no path
// passes through one, nor over a link in `down`. `plan`'s links are `s`'s, in order; the namespace
// owning the address and its switch (connected to it) get none, and neither does one that no
// path left reaches.
std::vector<RoutePlan> fabric_routes(const Scenario& s, const TopologyPlan& plan,
                                     const std::set<std::string>& down = {});

// Whether link `l` of a scenario joins a switch (so it is a fabric port, routed, without
// background addresses).
bool fabric_link(const Scenario& s, const LinkSpec& l);

}  // namespace contend::emulator::detail
