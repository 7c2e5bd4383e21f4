#pragma once
// Private: the libnl-route calls that build a qdisc tree on one interface's egress, shared by the
// disciplines (disciplines/*.cpp), cluster mode (per_peer_htb.cpp) and the Shaper. Handles are
// 1:<minor>; minors are printed in hex by tc (0x10 is 1:10).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contend/emulator/net/htb_params.h"
#include "contend/emulator/net/shaper.h"

struct nl_cache;
struct nl_sock;
struct rtnl_qdisc;

namespace contend::emulator::detail {

// One interface's egress, reached through a route socket in its namespace (not owned).
struct TcTarget {
  nl_sock* sock = nullptr;
  int ifindex = 0;
  std::string ifname;
  nl_cache* qdiscs = nullptr;  // a QdiscDump of its namespace to read (not owned); nullptr: dump one
};

// Every qdisc of one namespace, dumped at once: the kernel dumps a namespace's qdiscs whole,
// whatever interface is asked for, so a round of samples dumps each namespace once and reads each
// of its interfaces from it (a dump per interface cost a node of a 64-node full mesh 63 dumps of
// 63 interfaces' qdiscs a round).
class QdiscDump {
 public:
  static Result<QdiscDump> of(nl_sock* sock);
  nl_cache* get() const { return cache_.get(); }

 private:
  struct Free {
    void operator()(nl_cache* c) const;
  };
  std::unique_ptr<nl_cache, Free> cache_;
};
// tc.qdiscs, or else a dump of its own that `own` keeps.
Result<nl_cache*> qdiscs_of(const TcTarget& tc, std::optional<QdiscDump>& own);

struct NetemParams {
  std::chrono::nanoseconds delay{0};
  double loss_fraction = 0;
};

// HTB's rate fields are bytes per second.
std::uint64_t bytes_per_s(double bps);

// A root qdisc 1: of `kind` on `tc`'s interface, to configure and add; the caller puts it
// (rtnl_qdisc_put). nullptr when libnl does not know the kind.
rtnl_qdisc* alloc_root_qdisc(const TcTarget& tc, const char* kind);

// An HTB root 1: sending unclassified traffic to 1:<default_minor>; fails (changing nothing) when
// the interface has a root qdisc of ours already.
Result<void> add_htb_root(const TcTarget& tc, std::uint32_t default_minor);
// Adds (`create`) or changes in place the HTB class 1:<minor> under 1:<parent_minor> (0: the root).
Result<void> put_htb_class(const TcTarget& tc, std::uint32_t minor, std::uint32_t parent_minor, const HtbClass& c,
                           bool create);
// A u32 filter on the root: IPv4 packets whose source (`match_source`) or destination is
// `address` go to 1:<minor>.
Result<void> add_u32(const TcTarget& tc, std::uint32_t minor, const std::string& address, bool match_source);
// A cls_bpf filter on the root running the eBPF program `program_fd` (its name `name`), which
// returns the full handle of the class each packet goes to (not direct action).
Result<void> add_bpf_classifier(const TcTarget& tc, int program_fd, const std::string& name);
// A bfifo qdisc <parent_minor>: holding `limit_bytes` under the class 1:<parent_minor>, added in
// place of the kernel's default leaf (`create`) or its limit changed in place.
Result<void> put_bfifo(const TcTarget& tc, std::uint32_t parent_minor, std::uint32_t limit_bytes, bool create);
// A netem qdisc <parent_minor>: under the class 1:<parent_minor>.
Result<void> add_netem(const TcTarget& tc, std::uint32_t parent_minor, const NetemParams& n);
// A hash of the interface's shaping as a program could change it beside contend: every qdisc on
// it (kind, handle, parent), its filters under 1: (kind, priority, handle) and whether it is up.
Result<std::uint64_t> interface_setup(const TcTarget& tc);
// Counters and configured rate of each HTB class in `wanted` (minor, name) that exists; its setup
// (ClassStats::setup): ceil and bursts with interface_setup.
Result<std::vector<ClassStats>> htb_class_stats(const TcTarget& tc,
                                                const std::vector<std::pair<std::uint32_t, std::string>>& wanted);
// Deletes the interface's root qdisc and so its whole tree; ok when there is none or the
// interface is gone.
Result<void> delete_root(const TcTarget& tc);

}  // namespace contend::emulator::detail
