#pragma once
// Shaper: the qdisc tree on one interface's egress, over libnl-route on one warm netlink socket.
//  - link mode (HTB): root 1:, link class 1:1, workload class 1:10 (default) and background
//    class 1:20, which a u32 filter fills with packets from the link's background address;
//  - link mode (TBF): one token bucket at the link rate;
//  - cluster mode (HTB): class 1:(100+i) per peer address (u32 on the destination), others
//    through 1:2 at the interface's own rate.
// Rates change in place (rtnl_class_add with NLM_F_CREATE|NLM_F_REPLACE; 8-15 us measured here),
// never by deleting and re-adding the qdisc, which would let bursts through.
// The destructor removes the root qdisc it installed (errors logged); attach()ed or release()d
// shapers leave it. Not thread-safe: one Shaper per interface, used from one thread.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/htb_params.h"
#include "contend/emulator/netns.h"
#include "contend/emulator/scenario.h"

namespace contend::emulator {

struct ClassStats {
  std::uint32_t minor = 0;  // 1:<minor>
  std::string name;         // "link", "workload", "background", "peer 198.18.0.2", "tbf"
  double rate_bps = 0;      // configured rate
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  std::uint64_t drops = 0;
  std::uint64_t overlimits = 0;
};

struct NetemParams {
  std::chrono::nanoseconds delay{0};
  double loss_fraction = 0;
};

// Cluster mode: peer i's class is 1:(kFirstPeerClassMinor + i).
inline constexpr std::uint32_t kFirstPeerClassMinor = 0x100;

struct PeerRate {
  std::string address;  // "198.18.0.2"
  double rate_bps = 0;
};

class Shaper {
 public:
  // HTB link mode on `ifname` in the namespace of `sock`. kPermission without CAP_NET_ADMIN;
  // kInvalidArgument when the interface has a root qdisc of ours already.
  static Result<Shaper> install_htb(NlSocket sock, const std::string& ifname, double rate_bps, Preemption preemption,
                                    double workload_share, const std::string& background_src,
                                    const std::optional<NetemParams>& netem);
  static Result<Shaper> install_tbf(NlSocket sock, const std::string& ifname, double rate_bps);
  // Cluster mode: one class per peer; traffic to other addresses goes through at `default_bps`.
  static Result<Shaper> install_per_peer(NlSocket sock, const std::string& ifname, const std::vector<PeerRate>& peers,
                                         double default_bps);
  // Removes whatever root qdisc `ifname` has (a tree a crashed process left); ok when none.
  static Result<void> remove_root(NlSocket sock, const std::string& ifname);
  // Takes control of a tree installed earlier (by `contend emu up`), without owning it.
  static Result<Shaper> attach(NlSocket sock, const std::string& ifname, QdiscKind kind, Preemption preemption,
                               double workload_share);

  Shaper(Shaper&&) noexcept = default;
  Shaper& operator=(Shaper&&) = delete;
  Shaper(const Shaper&) = delete;
  ~Shaper();

  // Link mode: the link's rate, recomputing its classes (htb_classes) or the bucket (tbf_params),
  // changed in place; in force when this returns.
  Result<void> set_rate(double rate_bps);
  // Cluster mode: one peer's rate, in place.
  Result<void> set_peer_rate(std::size_t peer, double rate_bps);
  // Counters and configured rate of every class (or of the tbf).
  Result<std::vector<ClassStats>> stats() const;
  const std::string& ifname() const { return ifname_; }
  void release() { owned_ = false; }

 private:
  Shaper(NlSocket sock, std::string ifname, int ifindex, QdiscKind kind)
      : sock_(std::move(sock)), ifname_(std::move(ifname)), ifindex_(ifindex), kind_(kind) {}
  Result<void> add_class(std::uint32_t minor, std::uint32_t parent_minor, const HtbClass& c, int flags);
  Result<void> add_u32(std::uint32_t minor, const std::string& address, bool source);
  Result<void> add_tbf(double rate_bps, int flags);

  NlSocket sock_;
  std::string ifname_;
  int ifindex_ = 0;
  QdiscKind kind_ = QdiscKind::kHtb;
  Preemption preemption_ = Preemption::kBackgroundFirst;
  double workload_share_ = 0.5;
  std::vector<PeerRate> peers_;
  bool owned_ = false;
};

// Probes whether the kernel has sch_netem by adding one on the loopback of a throw-away
// namespace. kUnsupported ("the kernel lacks the netem qdisc (sch_netem) ...") when it does not;
// kPermission without the privilege to try.
Result<void> probe_netem();

}  // namespace contend::emulator
