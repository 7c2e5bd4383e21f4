#pragma once
// Private: small libnl-route helpers shared by topology and shaper.

#include <cstdint>
#include <string>

#include "contend/emulator/net/netns.h"
#include "contend/emulator/net/topology.h"

namespace contend::emulator::detail {

Result<int> ifindex_of(nl_sock* sock, const std::string& ifname);
Result<void> set_link_up(nl_sock* sock, const std::string& ifname);
// The bytes `ifname` has sent (the kernel's counter).
Result<std::uint64_t> sent_bytes(nl_sock* sock, const std::string& ifname);
// Sets the interface administratively up or down.
Result<void> set_link_state(nl_sock* sock, const std::string& ifname, bool up);
Result<void> add_address(nl_sock* sock, const std::string& ifname, const std::string& cidr);
// The route `r` (its netns is the socket's): to r.destination ("198.18.0.5/32") through each of
// its next hops (several make one multipath route), with the preferred source r.source when it is
// not empty.
// With `replace`, it takes the place of the route there is to r.destination (or is added).
Result<void> add_route(nl_sock* sock, const RoutePlan& r, bool replace = false);
// Deletes the route to `destination` ("198.18.0.5/32"); ok when there is none.
Result<void> delete_route(nl_sock* sock, const std::string& destination);
// Writes `value` to /proc/sys/<key> ("net/ipv4/ip_forward") as seen from the namespace `netns_fd`.
Result<void> set_sysctl(const Fd& netns_fd, const std::string& key, const std::string& value);

}  // namespace contend::emulator::detail
