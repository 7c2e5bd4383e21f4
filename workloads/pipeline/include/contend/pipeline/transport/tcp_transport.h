#pragma once
// TCP transport: one connection per pair of neighbouring ranks (see TcpOptions::neighbors; the
// connecting side retries until the deadline), TCP_NODELAY, autotuned (large) socket buffers, the congestion control
// set per socket (TCP_CONGESTION; a namespace's default cannot be changed, and this machine's is bbr). Frames are a
// 32-byte header (magic, kind, iteration, micro-batch, bytes, optional FNV-1a checksum) and the payload; a sender and a
// receiver thread per connection. A peer that exits without its closing frame breaks the link: every receive from it
// fails naming it. Thread-safe.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline {

struct TcpOptions {
  int rank = 0;
  int world_size = 1;
  // "host:port" of every rank; a rank listens on its port: on loopback when its own address is a
  // loopback one, else on every address of its node (a namespace's own, a host's).
  std::vector<std::string> peers;
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
  // The run's secret (CONTEND_RUN_TOKEN, which the runner gives every rank): a connection whose
  // greeting does not carry it is a stranger's, closed and ignored. 0: none (workers started by
  // hand), every greeting counts.
  std::uint64_t token = 0;
  // How long a connection may take to greet before it is taken for a stranger's.
  std::chrono::milliseconds greeting_timeout{2000};
  // The largest tensor a frame may announce (the run's own largest, rounded up): a header beyond
  // it is refused before anything is allocated for it.
  std::uint64_t max_message_bytes = 1ull << 30;
};

// The environment variable a runner hands its workers the run's token in (16 hex digits), and a
// new token for a run; the token this process was given (0 when none; an error when malformed).
inline constexpr const char* kRunTokenVariable = "CONTEND_RUN_TOKEN";
std::string new_run_token();
Result<std::uint64_t> run_token_from_environment();

// Connects rank `rank` to its neighbours. Errors: kInvalidArgument for a malformed peer list or
// an unknown congestion control (naming the ones available), kTimeout when a neighbour did not
// come up before the deadline, kIo naming the address otherwise.
Result<std::unique_ptr<Transport>> connect_tcp(const TcpOptions& options);

}  // namespace contend::pipeline
