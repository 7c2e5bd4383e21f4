#pragma once
// Private: how the ranks of a TCP transport find each other. Of each pair of neighbours one
// connects and the other accepts (connects_to); both greet with their rank and world size, so a
// connection is known by the rank at its other end. Accepting runs on a helper thread while this
// rank connects out, so the pipeline comes up in one round whatever order the workers start in.

#include <map>

#include "contend/common/socket.h"
#include "contend/pipeline/transport/tcp_transport.h"

namespace contend::pipeline::detail {

// "rank 2 (198.18.0.6:29500)".
std::string peer_name(const TcpOptions& o, int rank);

// Whether this rank opens the connection to `peer` (else accepts it): the lower rank of a pair,
// but the last rank for the ring's pair (0, p-1).
bool connects_to(const TcpOptions& o, int peer);

// One connection to each of `neighbors`, by rank, greeted both ways, each socket tuned (no delay,
// buffers, congestion control) and named after its peer. Errors: kTimeout naming the ranks that
// did not come up before o.connect_timeout, kInvalidArgument for a greeting from the wrong rank or
// world, kIo otherwise.
Result<std::map<int, TcpSocket>> connect_neighbors(const TcpOptions& o, const std::vector<int>& neighbors);

}  // namespace contend::pipeline::detail
