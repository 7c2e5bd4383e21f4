#include "contend/emulator/shaper.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_sched.h>
#include <netlink/route/class.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/qdisc/tbf.h>
#include <sched.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <thread>

#include "rtnl.h"

namespace contend::emulator {
namespace {

constexpr std::uint32_t kLinkMinor = 1;
constexpr std::uint32_t kWorkloadMinor = 0x10;  // tc prints minors in hex: 1:10
constexpr std::uint32_t kBackgroundMinor = 0x20;
constexpr std::uint32_t kDefaultPeerMinor = 2;
constexpr std::uint32_t kFirstPeerMinor = kFirstPeerClassMinor;

std::uint64_t bytes_per_s(double bps) {
  return static_cast<std::uint64_t>(std::llround(bps / 8.0));
}

std::string handle_text(std::uint32_t minor) {
  return "1:" + std::to_string(minor);
}

}  // namespace

Result<void> Shaper::add_class(std::uint32_t minor, std::uint32_t parent_minor, const HtbClass& c, int flags) {
  rtnl_class* cls = rtnl_class_alloc();
  rtnl_tc_set_ifindex(TC_CAST(cls), ifindex_);
  rtnl_tc_set_parent(TC_CAST(cls), parent_minor == 0 ? TC_HANDLE(1, 0) : TC_HANDLE(1, parent_minor));
  rtnl_tc_set_handle(TC_CAST(cls), TC_HANDLE(1, minor));
  int rc = rtnl_tc_set_kind(TC_CAST(cls), "htb");
  if (rc >= 0) {
    rtnl_htb_set_rate64(cls, bytes_per_s(c.rate_bps));
    rtnl_htb_set_ceil64(cls, bytes_per_s(c.ceil_bps));
    rtnl_htb_set_rbuffer(cls, c.burst_bytes);
    rtnl_htb_set_cbuffer(cls, c.cburst_bytes);
    rtnl_htb_set_quantum(cls, c.quantum_bytes);
    rtnl_htb_set_prio(cls, static_cast<std::uint32_t>(c.prio));
    rc = rtnl_class_add(sock_.get(), cls, flags);
  }
  rtnl_class_put(cls);
  if (rc < 0) {
    return nl_error(rc, "rtnl_class_add(" + ifname_ + " htb " + handle_text(minor) + ")");
  }
  return {};
}

Result<void> Shaper::add_u32(std::uint32_t minor, const std::string& address, bool source) {
  in_addr addr{};
  if (::inet_pton(AF_INET, address.c_str(), &addr) != 1) {
    return make_error(Errc::kInvalidArgument, "not an IPv4 address: \"" + address + "\"");
  }
  rtnl_cls* cls = rtnl_cls_alloc();
  rtnl_tc_set_ifindex(TC_CAST(cls), ifindex_);
  rtnl_tc_set_parent(TC_CAST(cls), TC_HANDLE(1, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(cls), "u32");
  if (rc >= 0) {
    rtnl_cls_set_prio(cls, 1);
    rtnl_cls_set_protocol(cls, ETH_P_IP);
    // IPv4 source address at offset 12, destination at 16.
    rc = rtnl_u32_add_key_in_addr(cls, &addr, 32, source ? 12 : 16, 0);
  }
  if (rc >= 0) {
    rc = rtnl_u32_set_classid(cls, TC_HANDLE(1, minor));
  }
  if (rc >= 0) {
    // Without TC_U32_TERMINAL a matching key does not classify (tc's `flowid` sets it too).
    rc = rtnl_u32_set_cls_terminal(cls);
  }
  if (rc >= 0) {
    rc = rtnl_cls_add(sock_.get(), cls, NLM_F_CREATE);
  }
  rtnl_cls_put(cls);
  if (rc < 0) {
    return nl_error(rc, "rtnl_cls_add(" + ifname_ + " u32 " + (source ? "src " : "dst ") + address + " -> " +
                            handle_text(minor) + ")");
  }
  return {};
}

Result<void> Shaper::add_tbf(double rate_bps, int flags) {
  const TbfParams p = tbf_params(rate_bps);
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), ifindex_);
  rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
  rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(1, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(q), "tbf");
  if (rc >= 0) {
    rtnl_qdisc_tbf_set_limit(q, static_cast<int>(p.limit_bytes));
    rtnl_qdisc_tbf_set_rate(q, static_cast<int>(bytes_per_s(rate_bps)), static_cast<int>(p.burst_bytes), 0);
    rc = rtnl_qdisc_add(sock_.get(), q, flags);
  }
  rtnl_qdisc_put(q);
  if (rc < 0) {
    return nl_error(rc, "rtnl_qdisc_add(" + ifname_ + " root tbf)");
  }
  return {};
}

namespace {

Result<void> add_root(nl_sock* sock, int ifindex, const std::string& ifname, std::uint32_t default_minor) {
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
  rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
  rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(1, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(q), "htb");
  if (rc >= 0) {
    rtnl_htb_set_defcls(q, TC_HANDLE(1, default_minor));
    rc = rtnl_qdisc_add(sock, q, NLM_F_CREATE | NLM_F_EXCL);
  }
  rtnl_qdisc_put(q);
  if (rc < 0) {
    return nl_error(rc, "rtnl_qdisc_add(" + ifname + " root htb 1:)");
  }
  return {};
}

Result<void> add_netem(nl_sock* sock, int ifindex, const std::string& ifname, std::uint32_t parent_minor,
                       const NetemParams& n) {
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
  rtnl_tc_set_parent(TC_CAST(q), TC_HANDLE(1, parent_minor));
  rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(parent_minor, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(q), "netem");
  if (rc >= 0) {
    rtnl_netem_set_delay(q, static_cast<int>(n.delay.count() / 1000));
    // netem's probability scale: 0 = never, 2^32 - 1 = always.
    rtnl_netem_set_loss(q, static_cast<int>(std::llround(n.loss_fraction * 4294967295.0)));
    rtnl_netem_set_limit(q, 100000);
    rc = rtnl_qdisc_add(sock, q, NLM_F_CREATE);
  }
  rtnl_qdisc_put(q);
  if (rc < 0) {
    return nl_error(rc, "rtnl_qdisc_add(" + ifname + " netem under 1:" + std::to_string(parent_minor) + ")");
  }
  return {};
}

}  // namespace

Result<Shaper> Shaper::install_htb(NlSocket sock, const std::string& ifname, double rate_bps, Preemption preemption,
                                   double workload_share, const std::string& background_src,
                                   const std::optional<NetemParams>& netem) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  if (auto ok = add_root(sock.get(), *index, ifname, kWorkloadMinor); !ok) {
    return ok.error();
  }
  Shaper s(std::move(sock), ifname, *index, QdiscKind::kHtb);
  s.owned_ = true;  // from here on, a failure removes the root again
  s.preemption_ = preemption;
  s.workload_share_ = workload_share;
  const HtbLinkClasses c = htb_classes(rate_bps, preemption, workload_share);
  // One at a time: after a failure nothing more is sent, and the destructor removes the root.
  const std::function<Result<void>()> steps[] = {
      [&] { return s.add_class(kLinkMinor, 0, c.link, NLM_F_CREATE | NLM_F_EXCL); },
      [&] { return s.add_class(kWorkloadMinor, kLinkMinor, c.workload, NLM_F_CREATE | NLM_F_EXCL); },
      [&] { return s.add_class(kBackgroundMinor, kLinkMinor, c.background, NLM_F_CREATE | NLM_F_EXCL); },
      [&] { return s.add_u32(kBackgroundMinor, background_src, true); }};
  for (const auto& step : steps) {
    if (auto ok = step(); !ok) {
      return ok.error();
    }
  }
  if (netem) {
    for (std::uint32_t minor : {kWorkloadMinor, kBackgroundMinor}) {
      if (auto ok = add_netem(s.sock_.get(), s.ifindex_, ifname, minor, *netem); !ok) {
        return ok.error();
      }
    }
  }
  return s;
}

Result<Shaper> Shaper::install_tbf(NlSocket sock, const std::string& ifname, double rate_bps) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  Shaper s(std::move(sock), ifname, *index, QdiscKind::kTbf);
  if (auto ok = s.add_tbf(rate_bps, NLM_F_CREATE | NLM_F_EXCL); !ok) {
    return ok.error();
  }
  s.owned_ = true;
  return s;
}

Result<Shaper> Shaper::install_per_peer(NlSocket sock, const std::string& ifname, const std::vector<PeerRate>& peers,
                                        double default_bps) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  if (auto ok = add_root(sock.get(), *index, ifname, kDefaultPeerMinor); !ok) {
    return ok.error();
  }
  Shaper s(std::move(sock), ifname, *index, QdiscKind::kHtb);
  s.owned_ = true;
  s.peers_ = peers;
  const auto flat = [](double bps) {
    HtbClass c;
    c.rate_bps = c.ceil_bps = bps;
    c.burst_bytes = c.cburst_bytes = burst_bytes_for(bps);
    return c;
  };
  if (auto ok = s.add_class(kDefaultPeerMinor, 0, flat(default_bps), NLM_F_CREATE | NLM_F_EXCL); !ok) {
    return ok.error();
  }
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const auto minor = kFirstPeerMinor + static_cast<std::uint32_t>(i);
    if (auto ok = s.add_class(minor, 0, flat(peers[i].rate_bps), NLM_F_CREATE | NLM_F_EXCL); !ok) {
      return ok.error();
    }
    if (auto ok = s.add_u32(minor, peers[i].address, false); !ok) {
      return ok.error();
    }
  }
  return s;
}

Result<Shaper> Shaper::attach(NlSocket sock, const std::string& ifname, QdiscKind kind, Preemption preemption,
                              double workload_share) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  Shaper s(std::move(sock), ifname, *index, kind);
  s.preemption_ = preemption;
  s.workload_share_ = workload_share;
  return s;
}

Result<void> Shaper::remove_root(NlSocket sock, const std::string& ifname) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), *index);
  rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
  const int rc = rtnl_qdisc_delete(sock.get(), q);
  rtnl_qdisc_put(q);
  if (rc < 0 && rc != -NLE_OBJ_NOTFOUND && rc != -NLE_INVAL) {
    return nl_error(rc, "rtnl_qdisc_delete(" + ifname + " root)");
  }
  return {};
}

Shaper::~Shaper() {
  if (!owned_ || !sock_) {
    return;
  }
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), ifindex_);
  rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
  const int rc = rtnl_qdisc_delete(sock_.get(), q);
  rtnl_qdisc_put(q);
  // The interface may be gone already (its namespace removed first): nothing left to remove.
  if (rc < 0 && rc != -NLE_OBJ_NOTFOUND && rc != -NLE_NODEV && rc != -NLE_INVAL) {
    std::fprintf(stderr, "contend: %s\n", nl_error(rc, "rtnl_qdisc_delete(" + ifname_ + " root)").message.c_str());
  }
}

Result<void> Shaper::set_rate(double rate_bps) {
  if (!(rate_bps > 0)) {
    return make_error(Errc::kInvalidArgument, ifname_ + ": a rate must be positive");
  }
  if (kind_ == QdiscKind::kTbf) {
    return add_tbf(rate_bps, NLM_F_CREATE | NLM_F_REPLACE);
  }
  const HtbLinkClasses c = htb_classes(rate_bps, preemption_, workload_share_);
  // HTB accepts children above their parent for the instant between the calls; each call is in
  // force when it returns, so the three land within tens of microseconds.
  for (auto [minor, parent, cls] :
       {std::tuple{kLinkMinor, 0u, c.link}, std::tuple{kWorkloadMinor, kLinkMinor, c.workload},
        std::tuple{kBackgroundMinor, kLinkMinor, c.background}}) {
    if (auto ok = add_class(minor, parent, cls, NLM_F_CREATE | NLM_F_REPLACE); !ok) {
      return ok;
    }
  }
  return {};
}

Result<void> Shaper::set_peer_rate(std::size_t peer, double rate_bps) {
  if (peer >= peers_.size()) {
    return make_error(Errc::kInvalidArgument, ifname_ + ": no peer " + std::to_string(peer));
  }
  HtbClass c;
  c.rate_bps = c.ceil_bps = rate_bps;
  c.burst_bytes = c.cburst_bytes = burst_bytes_for(rate_bps);
  peers_[peer].rate_bps = rate_bps;
  return add_class(kFirstPeerMinor + static_cast<std::uint32_t>(peer), 0, c, NLM_F_CREATE | NLM_F_REPLACE);
}

Result<std::vector<ClassStats>> Shaper::stats() const {
  std::vector<ClassStats> out;
  if (kind_ == QdiscKind::kTbf) {
    nl_cache* cache = nullptr;
    if (int rc = rtnl_qdisc_alloc_cache(sock_.get(), &cache); rc < 0) {
      return nl_error(rc, "rtnl_qdisc_alloc_cache(" + ifname_ + ")");
    }
    rtnl_qdisc* q = rtnl_qdisc_get(cache, ifindex_, TC_HANDLE(1, 0));
    if (q != nullptr) {
      ClassStats s{0,
                   "tbf",
                   8.0 * rtnl_qdisc_tbf_get_rate(q),
                   rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_BYTES),
                   rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_PACKETS),
                   rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_DROPS),
                   rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_OVERLIMITS)};
      out.push_back(s);
      rtnl_qdisc_put(q);
    }
    nl_cache_free(cache);
    return out;
  }
  nl_cache* cache = nullptr;
  if (int rc = rtnl_class_alloc_cache(sock_.get(), ifindex_, &cache); rc < 0) {
    return nl_error(rc, "rtnl_class_alloc_cache(" + ifname_ + ")");
  }
  std::vector<std::pair<std::uint32_t, std::string>> wanted;
  if (peers_.empty()) {
    wanted = {{kLinkMinor, "link"}, {kWorkloadMinor, "workload"}, {kBackgroundMinor, "background"}};
  } else {
    wanted.emplace_back(kDefaultPeerMinor, "default");
    for (std::size_t i = 0; i < peers_.size(); ++i) {
      wanted.emplace_back(kFirstPeerMinor + i, "peer " + peers_[i].address);
    }
  }
  for (const auto& [minor, name] : wanted) {
    rtnl_class* c = rtnl_class_get(cache, ifindex_, TC_HANDLE(1, minor));
    if (c == nullptr) {
      continue;
    }
    std::uint64_t rate = 0;
    rtnl_htb_get_rate64(c, &rate);
    out.push_back({minor, name, 8.0 * static_cast<double>(rate), rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_BYTES),
                   rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_PACKETS), rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_DROPS),
                   rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_OVERLIMITS)});
    rtnl_class_put(c);
  }
  nl_cache_free(cache);
  return out;
}

Result<void> probe_netem() {
  Result<void> out;
  std::thread t([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      out = errno_error(errno, "probing for netem: unshare(CLONE_NEWNET)");
      return;
    }
    auto sock = open_route_socket();
    if (!sock) {
      out = sock.error();
      return;
    }
    rtnl_qdisc* q = rtnl_qdisc_alloc();
    rtnl_tc_set_ifindex(TC_CAST(q), 1);  // lo
    rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
    rtnl_tc_set_kind(TC_CAST(q), "netem");
    const int rc = rtnl_qdisc_add(sock->get(), q, NLM_F_CREATE);
    rtnl_qdisc_put(q);
    if (rc == -NLE_OBJ_NOTFOUND || rc == -NLE_OPNOTSUPP) {
      out = make_error(Errc::kUnsupported,
                       "the kernel lacks the netem qdisc (sch_netem), which link delay and loss need: " +
                           std::string(nl_geterror(-rc)));
    } else if (rc < 0) {
      out = nl_error(rc, "probing for netem: rtnl_qdisc_add(lo root netem)");
    }
  });
  t.join();
  return out;
}

}  // namespace contend::emulator
