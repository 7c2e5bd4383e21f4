#pragma once
// Shaper: owns the qdisc tree on one interface's egress, over libnl-route on one warm netlink
// socket.
//  - link mode: the shaping discipline a link's "qdisc" names (discipline_registry.h: HTB with
//    workload and background classes, or TBF), built by its code in disciplines/;
//  - cluster mode (HTB): class 1:(kFirstPeerClassMinor + i) per peer address (u32 on the
//    destination), others through 1:2 at the interface's own rate.
// Rates change in place (rtnl_class_add with NLM_F_CREATE|NLM_F_REPLACE; 8-15 us measured here),
// never by deleting and re-adding the qdisc, which would let bursts through.
// The destructor removes the root qdisc it installed (errors logged); attach()ed or release()d
// shapers leave it. Not thread-safe: one Shaper per interface, used from one thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/netns.h"
#include "contend/emulator/scenario/scenario.h"

struct nl_cache;

namespace contend::emulator {

struct ClassStats {
  std::uint32_t minor = 0;  // 1:<minor>
  std::string name;         // "link", "workload", "background", "peer 198.18.0.2", "tbf"
  double rate_bps = 0;      // configured rate
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  std::uint64_t drops = 0;
  std::uint64_t overlimits = 0;
  std::uint64_t backlog_bytes = 0;  // queued at the sample (a leaf class's or a qdisc's queue; 0 for an inner class)
  bool link_level = false;          // its rate is the whole link's (what `contend emu status` shows)
  // A hash of what else shapes it that a program in its namespace could change: its ceil and
  // bursts, every qdisc on its interface, the interface's filters and whether it is up (0: not
  // read). The player's watch compares it from sample to sample.
  std::uint64_t setup = 0;
};

// Cluster mode: peer i's class is 1:(kFirstPeerClassMinor + i).
inline constexpr std::uint32_t kFirstPeerClassMinor = 0x100;

// One class of cluster mode: the traffic to any of `addresses` (a peer node's one address, or
// every other host's where a host's link joins a switch: its NIC), at `rate_bps`.
struct PeerRate {
  std::vector<std::string> addresses;  // {"198.18.0.2"}
  double rate_bps = 0;
};

class Discipline;  // disciplines/discipline.h
class PerPeerHtb;

class Shaper {
 public:
  // Link mode on `ifname` in the namespace of `sock`: the discipline `link.qdisc` names, at
  // `link.rate_bps`; background traffic leaves from `background_src` (an IPv4 address).
  // kPermission without CAP_NET_ADMIN; kInvalidArgument when the interface has a root qdisc of
  // ours already (left as it is) or `link.qdisc` is not registered.
  static Result<Shaper> install(NlSocket sock, const std::string& ifname, const LinkSpec& link,
                                const std::string& background_src);
  // Cluster mode: one class per peer; traffic to other addresses goes through at `default_bps`.
  static Result<Shaper> install_per_peer(NlSocket sock, const std::string& ifname, const std::vector<PeerRate>& peers,
                                         double default_bps);
  // Removes whatever root qdisc `ifname` has (a tree a crashed process left); ok when none.
  static Result<void> remove_root(NlSocket sock, const std::string& ifname);
  // Takes control of the link-mode tree of `link` installed earlier (by `contend emu up`), without
  // owning it.
  static Result<Shaper> attach(NlSocket sock, const std::string& ifname, const LinkSpec& link);

  Shaper(Shaper&&) noexcept;
  Shaper& operator=(Shaper&&) = delete;
  Shaper(const Shaper&) = delete;
  ~Shaper();

  // Link mode: the link's rate, its tree recomputed by the discipline and changed in place; in
  // force when this returns.
  Result<void> set_rate(double rate_bps);
  // Cluster mode: one peer's rate, in place.
  Result<void> set_peer_rate(std::size_t peer, double rate_bps);
  // Counters and configured rate of every class (or of the tbf); `qdiscs`, when given, a dump of
  // the namespace's qdiscs taken for this round (detail::QdiscDump), read instead of dumping again.
  Result<std::vector<ClassStats>> stats(nl_cache* qdiscs = nullptr) const;
  const std::string& ifname() const { return ifname_; }
  void release() { owned_ = false; }

 private:
  Shaper(NlSocket sock, std::string ifname, int ifindex, std::unique_ptr<Discipline> discipline);
  // Opens `ifname` and installs `discipline` there; the Shaper owns the tree once it is built.
  static Result<Shaper> install_discipline(NlSocket sock, const std::string& ifname, double rate_bps,
                                           std::unique_ptr<Discipline> discipline);

  NlSocket sock_;
  std::string ifname_;
  int ifindex_ = 0;
  std::unique_ptr<Discipline> discipline_;
  PerPeerHtb* per_peer_ = nullptr;  // cluster mode: discipline_, seen as what it is
  bool owned_ = false;
};

// Probes whether the kernel has sch_netem by adding one on the loopback of a throw-away
// namespace. kUnsupported ("the kernel lacks the netem qdisc (sch_netem) ...") when it does not;
// kPermission without the privilege to try.
Result<void> probe_netem();

}  // namespace contend::emulator
