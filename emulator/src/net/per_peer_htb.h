#pragma once
// Private: cluster mode's tree (Shaper::install_per_peer): an HTB root whose class
// 1:(kFirstPeerClassMinor + i) holds traffic to peer i (u32 on the destination) and whose default
// class 1:2 passes the rest at the interface's own rate. Built from the same HTB classes and
// netlink calls as the htb discipline. Not in the registry: scenarios do not choose it.

#include <vector>

#include "net/disciplines/discipline.h"

namespace contend::emulator {

class PerPeerHtb final : public Discipline {
 public:
  PerPeerHtb(std::vector<PeerRate> peers, double default_bps) : peers_(std::move(peers)), default_bps_(default_bps) {}

  Result<void> install(const detail::TcTarget& tc, double rate_bps) override;
  // Cluster mode has no one link rate: kInvalidArgument, set_peer_rate instead.
  Result<void> set_rate(const detail::TcTarget& tc, double rate_bps) override;
  Result<std::vector<ClassStats>> stats(const detail::TcTarget& tc) const override;
  // Peer `peer`'s class, in place; kInvalidArgument for an unknown peer.
  Result<void> set_peer_rate(const detail::TcTarget& tc, std::size_t peer, double rate_bps);

 private:
  Result<void> build(const detail::TcTarget& tc);
  std::vector<PeerRate> peers_;
  double default_bps_;
};

}  // namespace contend::emulator
