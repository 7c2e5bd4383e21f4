#pragma once
// The `nccl` transport: activations and gradients between adjacent ranks through NCCL
// (ncclSend/ncclRecv on the rank's GPU), the adaptive scheduler's small control messages through
// the TCP transport it was bootstrapped over (the worker's first connection).
//  - Bootstrap: for each neighbour, each rank makes the unique id of the communicator it sends on
//    and sends it, with its GPU's UUID, over TCP; the communicators (two ranks each, one per
//    direction of each pair, so a sender thread and a receiver thread never share one) are
//    created together in one NCCL group.
//  - NCCL refuses two ranks of a communicator on one GPU of one host: neighbours on the same GPU
//    (UUID) with the same NCCL_HOSTID are refused at the bootstrap with a message saying so. With
//    an NCCL_HOSTID of their own (the runner gives every namespace one) NCCL treats them as hosts
//    apart and connects them through its sockets, so stages sharing a GPU still cross the shaped
//    links.
//  - Tensors cross the transport in host memory (the ComputeBackend interface): each message is
//    copied into pinned memory, to the device and sent as a header (kind, iteration, micro-batch,
//    floats) and the payload; the receiver times the payload's two halves for the adaptive
//    scheduler, as the TCP transport does.
//  - Every device and pinned buffer is allocated for the largest tensor (`message_floats`) before
//    the communicators exist: an allocation while other channels' NCCL kernels wait on the GPU can
//    block behind them. At the end, a peer that is gone gets 10 s, then the communicators are
//    aborted before the threads are joined, so a thread blocked on a dead peer returns.
//  - Which interface NCCL's sockets use is its environment's business: NCCL_SOCKET_IFNAME (the
//    shaped interface), NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE; the runner sets them
//    for nccl runs (docs/cuda.md).
// Built only with CONTEND_WITH_CUDA where NCCL is found. Thread-safe as Transport.

#include <cstddef>
#include <memory>
#include <string>

#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline_cuda {

// Connects `rank` of `world_size` to its neighbours over NCCL, bootstrapping over `bootstrap`
// (connected already; kept for control messages), for tensors of at most `message_floats` floats
// (a larger one fails its send with kInvalidArgument). `device` -1: rank % visible devices, as the
// cuda backend picks. kUnsupported without a device or when a neighbour shares this GPU and host;
// kIo naming the NCCL or CUDA call otherwise; kTimeout when a neighbour's bootstrap message does
// not come.
Result<std::unique_ptr<pipeline::Transport>> connect_nccl(std::unique_ptr<pipeline::Transport> bootstrap, int rank,
                                                          int world_size, std::size_t message_floats, int device = -1);

// Registers "nccl" with the pipeline's transport table (worker --transport nccl).
void register_nccl_transport();

}  // namespace contend::pipeline_cuda
