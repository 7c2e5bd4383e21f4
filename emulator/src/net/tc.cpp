#include "net/tc.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <net/if.h>
#include <netlink/route/class.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/fifo.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/tc.h>

#include <cmath>

#include "contend/common/fnv.h"
#include "contend/common/socket.h"

namespace contend::emulator::detail {
namespace {

std::string handle_text(std::uint32_t minor) {
  return "1:" + std::to_string(minor);
}

int flags_for(bool create) {
  return create ? NLM_F_CREATE | NLM_F_EXCL : NLM_F_CREATE | NLM_F_REPLACE;
}

}  // namespace

std::uint64_t bytes_per_s(double bps) {
  return static_cast<std::uint64_t>(std::llround(bps / 8.0));
}

rtnl_qdisc* alloc_root_qdisc(const TcTarget& tc, const char* kind) {
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), tc.ifindex);
  rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
  rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(1, 0));
  if (rtnl_tc_set_kind(TC_CAST(q), kind) < 0) {
    rtnl_qdisc_put(q);
    return nullptr;
  }
  return q;
}

Result<void> add_htb_root(const TcTarget& tc, std::uint32_t default_minor) {
  rtnl_qdisc* q = alloc_root_qdisc(tc, "htb");
  if (q == nullptr) {
    return nl_error(NLE_OPNOTSUPP, "rtnl_tc_set_kind(htb)");
  }
  rtnl_htb_set_defcls(q, TC_HANDLE(1, default_minor));
  const int rc = rtnl_qdisc_add(tc.sock, q, NLM_F_CREATE | NLM_F_EXCL);
  rtnl_qdisc_put(q);
  if (rc < 0) {
    return nl_error(rc, "rtnl_qdisc_add(" + tc.ifname + " root htb 1:)");
  }
  return {};
}

Result<void> put_htb_class(const TcTarget& tc, std::uint32_t minor, std::uint32_t parent_minor, const HtbClass& c,
                           bool create) {
  rtnl_class* cls = rtnl_class_alloc();
  rtnl_tc_set_ifindex(TC_CAST(cls), tc.ifindex);
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
    rc = rtnl_class_add(tc.sock, cls, flags_for(create));
  }
  rtnl_class_put(cls);
  if (rc < 0) {
    return nl_error(rc, "rtnl_class_add(" + tc.ifname + " htb " + handle_text(minor) + ")");
  }
  return {};
}

Result<void> add_u32(const TcTarget& tc, std::uint32_t minor, const std::string& address, bool match_source) {
  auto parsed = parse_ipv4(address);
  if (!parsed) {
    return parsed.error();
  }
  in_addr addr = *parsed;
  rtnl_cls* cls = rtnl_cls_alloc();
  rtnl_tc_set_ifindex(TC_CAST(cls), tc.ifindex);
  rtnl_tc_set_parent(TC_CAST(cls), TC_HANDLE(1, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(cls), "u32");
  if (rc >= 0) {
    rtnl_cls_set_prio(cls, 1);
    rtnl_cls_set_protocol(cls, ETH_P_IP);
    // IPv4 source address at offset 12, destination at 16.
    rc = rtnl_u32_add_key_in_addr(cls, &addr, 32, match_source ? 12 : 16, 0);
  }
  if (rc >= 0) {
    rc = rtnl_u32_set_classid(cls, TC_HANDLE(1, minor));
  }
  if (rc >= 0) {
    // Without TC_U32_TERMINAL a matching key does not classify (tc's `flowid` sets it too).
    rc = rtnl_u32_set_cls_terminal(cls);
  }
  if (rc >= 0) {
    rc = rtnl_cls_add(tc.sock, cls, NLM_F_CREATE);
  }
  rtnl_cls_put(cls);
  if (rc < 0) {
    return nl_error(rc, "rtnl_cls_add(" + tc.ifname + " u32 " + (match_source ? "src " : "dst ") + address + " -> " +
                            handle_text(minor) + ")");
  }
  return {};
}

Result<void> add_bpf_classifier(const TcTarget& tc, int program_fd, const std::string& name) {
  // libnl has no cls_bpf: the request as tc(8) sends it.
  nl_msg* msg = nlmsg_alloc_simple(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL);
  if (msg == nullptr) {
    return nl_error(NLE_NOMEM, "nlmsg_alloc_simple");
  }
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = tc.ifindex;
  t.tcm_parent = TC_HANDLE(1, 0);
  t.tcm_info = TC_H_MAKE(1u << 16, htons(ETH_P_ALL));  // priority 1, every protocol
  int rc = nlmsg_append(msg, &t, sizeof t, NLMSG_ALIGNTO);
  nlattr* options = nullptr;
  if (rc >= 0) {
    rc = nla_put_string(msg, TCA_KIND, "bpf");
  }
  if (rc >= 0) {
    options = nla_nest_start(msg, TCA_OPTIONS);
    rc = options == nullptr ? -NLE_NOMEM : nla_put_u32(msg, TCA_BPF_FD, static_cast<std::uint32_t>(program_fd));
  }
  if (rc >= 0) {
    rc = nla_put_string(msg, TCA_BPF_NAME, name.c_str());
  }
  if (rc >= 0) {
    rc = nla_nest_end(msg, options);
  }
  if (rc < 0) {
    nlmsg_free(msg);
  } else {
    rc = nl_send_sync(tc.sock, msg);  // frees msg
  }
  if (rc < 0) {
    return nl_error(rc, "adding the bpf filter " + name + " on " + tc.ifname);
  }
  return {};
}

Result<void> put_bfifo(const TcTarget& tc, std::uint32_t parent_minor, std::uint32_t limit_bytes, bool create) {
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), tc.ifindex);
  rtnl_tc_set_parent(TC_CAST(q), TC_HANDLE(1, parent_minor));
  rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(parent_minor, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(q), "bfifo");
  if (rc >= 0) {
    rc = rtnl_qdisc_fifo_set_limit(q, static_cast<int>(limit_bytes));
  }
  if (rc >= 0) {
    // The kernel's default leaf has another handle: NLM_F_CREATE grafts ours in its place.
    rc = rtnl_qdisc_add(tc.sock, q, create ? NLM_F_CREATE : NLM_F_CREATE | NLM_F_REPLACE);
  }
  rtnl_qdisc_put(q);
  if (rc < 0) {
    return nl_error(rc, "rtnl_qdisc_add(" + tc.ifname + " bfifo under " + handle_text(parent_minor) + ")");
  }
  return {};
}

Result<void> add_netem(const TcTarget& tc, std::uint32_t parent_minor, const NetemParams& n) {
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), tc.ifindex);
  rtnl_tc_set_parent(TC_CAST(q), TC_HANDLE(1, parent_minor));
  rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(parent_minor, 0));
  int rc = rtnl_tc_set_kind(TC_CAST(q), "netem");
  if (rc >= 0) {
    rtnl_netem_set_delay(q, static_cast<int>(n.delay.count() / 1000));
    // netem's probability scale: 0 = never, 2^32 - 1 = always.
    rtnl_netem_set_loss(q, static_cast<int>(std::llround(n.loss_fraction * 4294967295.0)));
    rtnl_netem_set_limit(q, 100000);
    rc = rtnl_qdisc_add(tc.sock, q, NLM_F_CREATE);
  }
  rtnl_qdisc_put(q);
  if (rc < 0) {
    return nl_error(rc, "rtnl_qdisc_add(" + tc.ifname + " netem under 1:" + std::to_string(parent_minor) + ")");
  }
  return {};
}

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  return fnv1a(std::string_view(reinterpret_cast<const char*>(&v), sizeof v), h);
}

// mix() of every object of `cache` on the interface: its kind, handle and parent, and for a
// classifier its priority.
std::uint64_t mix_tc_objects(std::uint64_t h, nl_cache* cache, int ifindex, bool classifiers) {
  for (nl_object* o = nl_cache_get_first(cache); o != nullptr; o = nl_cache_get_next(o)) {
    rtnl_tc* t = TC_CAST(o);
    if (rtnl_tc_get_ifindex(t) != ifindex) {
      continue;
    }
    const char* kind = rtnl_tc_get_kind(t);
    h = fnv1a(kind != nullptr ? kind : "", h);
    h = mix(mix(h, rtnl_tc_get_handle(t)), rtnl_tc_get_parent(t));
    if (classifiers) {
      h = mix(h, rtnl_cls_get_prio(reinterpret_cast<rtnl_cls*>(o)));
    }
  }
  return h;
}

}  // namespace

void QdiscDump::Free::operator()(nl_cache* c) const {
  nl_cache_free(c);
}

Result<QdiscDump> QdiscDump::of(nl_sock* sock) {
  nl_cache* cache = nullptr;
  if (int rc = rtnl_qdisc_alloc_cache(sock, &cache); rc < 0) {
    return nl_error(rc, "rtnl_qdisc_alloc_cache");
  }
  QdiscDump d;
  d.cache_.reset(cache);
  return d;
}

Result<nl_cache*> qdiscs_of(const TcTarget& tc, std::optional<QdiscDump>& own) {
  if (tc.qdiscs != nullptr) {
    return tc.qdiscs;
  }
  auto dump = QdiscDump::of(tc.sock);
  if (!dump) {
    return with_context(dump.error(), tc.ifname);
  }
  own = std::move(*dump);
  return own->get();
}

Result<std::uint64_t> interface_setup(const TcTarget& tc) {
  std::optional<QdiscDump> own;
  auto qdiscs = qdiscs_of(tc, own);
  if (!qdiscs) {
    return qdiscs.error();
  }
  std::uint64_t h = mix_tc_objects(kFnv1aStart, *qdiscs, tc.ifindex, false);
  nl_cache* filters = nullptr;
  if (int rc = rtnl_cls_alloc_cache(tc.sock, tc.ifindex, TC_HANDLE(1, 0), &filters); rc < 0) {
    return nl_error(rc, "rtnl_cls_alloc_cache(" + tc.ifname + ")");
  }
  h = mix_tc_objects(h, filters, tc.ifindex, true);
  nl_cache_free(filters);
  rtnl_link* link = nullptr;
  if (int rc = rtnl_link_get_kernel(tc.sock, tc.ifindex, nullptr, &link); rc < 0) {
    return nl_error(rc, "rtnl_link_get_kernel(" + tc.ifname + ")");
  }
  h = mix(h, rtnl_link_get_flags(link) & IFF_UP);
  rtnl_link_put(link);
  return h;
}

Result<std::vector<ClassStats>> htb_class_stats(const TcTarget& tc,
                                                const std::vector<std::pair<std::uint32_t, std::string>>& wanted) {
  auto setup = interface_setup(tc);
  if (!setup) {
    return setup.error();
  }
  nl_cache* cache = nullptr;
  if (int rc = rtnl_class_alloc_cache(tc.sock, tc.ifindex, &cache); rc < 0) {
    return nl_error(rc, "rtnl_class_alloc_cache(" + tc.ifname + ")");
  }
  std::vector<ClassStats> out;
  for (const auto& [minor, name] : wanted) {
    rtnl_class* c = rtnl_class_get(cache, tc.ifindex, TC_HANDLE(1, minor));
    if (c == nullptr) {
      continue;
    }
    std::uint64_t rate = 0;
    rtnl_htb_get_rate64(c, &rate);
    ClassStats s;
    s.minor = minor;
    s.name = name;
    s.rate_bps = 8.0 * static_cast<double>(rate);
    s.bytes = rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_BYTES);
    s.packets = rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_PACKETS);
    s.drops = rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_DROPS);
    s.overlimits = rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_OVERLIMITS);
    s.backlog_bytes = rtnl_tc_get_stat(TC_CAST(c), RTNL_TC_BACKLOG);
    std::uint64_t ceil = 0;
    rtnl_htb_get_ceil64(c, &ceil);
    s.setup = mix(mix(mix(*setup, ceil), rtnl_htb_get_rbuffer(c)), rtnl_htb_get_cbuffer(c));
    out.push_back(std::move(s));
    rtnl_class_put(c);
  }
  nl_cache_free(cache);
  return out;
}

Result<void> delete_root(const TcTarget& tc) {
  rtnl_qdisc* q = rtnl_qdisc_alloc();
  rtnl_tc_set_ifindex(TC_CAST(q), tc.ifindex);
  rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
  const int rc = rtnl_qdisc_delete(tc.sock, q);
  rtnl_qdisc_put(q);
  // No root (the kernel's default qdisc answers EINVAL), or the interface is gone with its
  // namespace: nothing left to remove.
  if (rc < 0 && rc != -NLE_OBJ_NOTFOUND && rc != -NLE_NODEV && rc != -NLE_INVAL) {
    return nl_error(rc, "rtnl_qdisc_delete(" + tc.ifname + " root)");
  }
  return {};
}

}  // namespace contend::emulator::detail
