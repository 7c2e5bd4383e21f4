#pragma once
// Private: small libnl-route helpers shared by topology and shaper.

#include <string>

#include "contend/emulator/net/netns.h"

namespace contend::emulator::detail {

Result<int> ifindex_of(nl_sock* sock, const std::string& ifname);
Result<void> set_link_up(nl_sock* sock, const std::string& ifname);
Result<void> add_address(nl_sock* sock, const std::string& ifname, const std::string& cidr);
// A route to `destination` ("198.18.0.5/32") via the gateway `via` on `ifname`, with the
// preferred source address `source` when it is not empty.
Result<void> add_route(nl_sock* sock, const std::string& destination, const std::string& via, const std::string& ifname,
                       const std::string& source);

}  // namespace contend::emulator::detail
