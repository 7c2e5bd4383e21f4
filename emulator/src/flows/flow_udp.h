#pragma once
// Private: the sending side of a UDP flow source. Batches of datagrams go out in one sendmmsg
// each, round-robin over the flow's connected sockets; with UDP GSO (UDP_SEGMENT, probed on the
// sockets at construction) every message is a buffer of up to kMaxGsoSegments datagrams that the
// kernel cuts (in software on veth, or the NIC), so a 64 KB buffer costs one trip through the
// stack. Where the kernel lacks GSO (setsockopt fails) or a device refuses it (the first send
// fails with EIO), it sends one datagram a message and says why in path(). All messages point
// into one payload buffer: a flow's memory does not grow with its rate. Not thread-safe: one per
// source thread.

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/common/socket.h"
#include "contend/emulator/flows/flow_pacer.h"

namespace contend::emulator {

class UdpBatchSender {
 public:
  // `socks`: connected UDP sockets (non-blocking), which must outlive the sender; datagrams of
  // `datagram_bytes` (1..1472) at `rate_bps` (> 0; sizes the batches).
  UdpBatchSender(std::vector<UdpSocket>& socks, std::size_t datagram_bytes, double rate_bps);

  // Sends `datagrams` (at most plan().segments * plan().max_buffers) on the next socket; returns
  // the payload bytes the kernel took: all, some, or 0 when its queue is full (EAGAIN, ENOBUFS)
  // or, between hosts, the peer is not listening yet (ECONNREFUSED). Other errors: "sendmmsg: ...".
  Result<std::uint64_t> send(std::size_t datagrams);

  const UdpBatchPlan& plan() const { return plan_; }
  // Whether it sends GSO buffers now (false from the start, or since a device refused them).
  bool gso() const { return gso_; }
  // How it sends: "sendmmsg, UDP GSO (44 x 1472 B a buffer)", or "sendmmsg without UDP GSO (why)".
  const std::string& path() const { return path_; }

 private:
  // Sets UDP_SEGMENT to `gso_bytes` (0: off) on every socket; the first error, if any.
  Result<void> set_gso(int gso_bytes);
  void use_plan(bool gso, double rate_bps);

  std::vector<UdpSocket>& socks_;
  double rate_bps_;
  UdpBatchPlan plan_;
  std::string path_;
  bool gso_ = false;
  bool gso_confirmed_ = false;  // a GSO send went through: EIO no longer means "no GSO"
  std::size_t next_ = 0;
  std::vector<char> payload_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
};

}  // namespace contend::emulator
