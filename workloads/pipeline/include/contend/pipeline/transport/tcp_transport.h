#pragma once
// TCP transport: one connection per pair of neighbouring ranks (see TcpOptions::neighbors; the
// connecting side retries until the deadline), TCP_NODELAY, autotuned (large) socket buffers, the congestion control set
// per socket (TCP_CONGESTION; a namespace's default cannot be changed, and this machine's is
// bbr). Frames are a 32-byte header (magic, kind, iteration, micro-batch, bytes, optional
// FNV-1a checksum) and the payload; a sender and a receiver thread per connection.
// A peer that exits without its closing frame breaks the link: every receive from it fails
// naming it. Thread-safe.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline {

struct TcpOptions {
  int rank = 0;
  int world_size = 1;
  std::vector<std::string> peers;  // "host:port" of every rank; a rank listens on its port (any address)
  // The ranks this rank exchanges tensors with (Schedule::peers_of); empty: rank - 1 and rank + 1.
  // Of a pair, the lower rank connects to the higher, but the last rank connects to rank 0 (the
  // ring of a looped schedule).
  std::vector<int> neighbors;
  // Where to reach a rank when not at peers[rank] (the runner's address on a shared link).
  std::map<int, std::string> reach;
  std::string congestion = "cubic";  // TCP_CONGESTION of every socket
  std::chrono::milliseconds connect_timeout{30000};
  int socket_buffer_bytes = 8 << 20;  // SO_SNDBUF and SO_RCVBUF
  bool checksum = false;              // checksum every payload and verify it on arrival
};

// Connects rank `rank` to its neighbours. Errors: kInvalidArgument for a malformed peer list or
// an unknown congestion control (naming the ones available), kTimeout when a neighbour did not
// come up before the deadline, kIo naming the address otherwise.
Result<std::unique_ptr<Transport>> connect_tcp(const TcpOptions& options);

}  // namespace contend::pipeline
