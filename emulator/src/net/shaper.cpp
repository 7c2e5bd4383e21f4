#include "contend/emulator/net/shaper.h"

#include <linux/pkt_sched.h>
#include <netlink/route/qdisc.h>
#include <sched.h>

#include <cstdio>
#include <thread>

#include "net/disciplines/discipline.h"
#include "net/per_peer_htb.h"
#include "net/rtnl.h"
#include "threads.h"

namespace contend::emulator {
namespace {

Result<std::unique_ptr<Discipline>> make_discipline(const LinkSpec& link, const std::string& background_src) {
  const DisciplineItem* d = find_discipline(link.qdisc);
  if (d == nullptr) {
    return make_error(Errc::kInvalidArgument, "link " + link.name + ": no shaping discipline \"" + link.qdisc + "\"");
  }
  return d->kind.make(link, background_src);
}

}  // namespace

Shaper::Shaper(NlSocket sock, std::string ifname, int ifindex, std::unique_ptr<Discipline> discipline)
    : sock_(std::move(sock)), ifname_(std::move(ifname)), ifindex_(ifindex), discipline_(std::move(discipline)) {}

Shaper::Shaper(Shaper&&) noexcept = default;

Result<Shaper> Shaper::install_discipline(NlSocket sock, const std::string& ifname, double rate_bps,
                                          std::unique_ptr<Discipline> discipline) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  Shaper s(std::move(sock), ifname, *index, std::move(discipline));
  if (auto ok = s.discipline_->install({s.sock_.get(), s.ifindex_, s.ifname_}, rate_bps); !ok) {
    return ok.error();  // the discipline removed what it added, and left a tree it found alone
  }
  s.owned_ = true;
  return s;
}

Result<Shaper> Shaper::install(NlSocket sock, const std::string& ifname, const LinkSpec& link,
                               const std::string& background_src) {
  auto discipline = make_discipline(link, background_src);
  if (!discipline) {
    return discipline.error();
  }
  return install_discipline(std::move(sock), ifname, link.rate_bps, std::move(*discipline));
}

Result<Shaper> Shaper::install_per_peer(NlSocket sock, const std::string& ifname, const std::vector<PeerRate>& peers,
                                        double default_bps) {
  auto tree = std::make_unique<PerPeerHtb>(peers, default_bps);
  PerPeerHtb* view = tree.get();
  auto s = install_discipline(std::move(sock), ifname, default_bps, std::move(tree));
  if (s) {
    s->per_peer_ = view;
  }
  return s;
}

Result<Shaper> Shaper::attach(NlSocket sock, const std::string& ifname, const LinkSpec& link) {
  auto discipline = make_discipline(link, "");
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (auto e = first_error(discipline, index)) {
    return *e;
  }
  return Shaper(std::move(sock), ifname, *index, std::move(*discipline));
}

Result<void> Shaper::remove_root(NlSocket sock, const std::string& ifname) {
  auto index = detail::ifindex_of(sock.get(), ifname);
  if (!index) {
    return index.error();
  }
  return detail::delete_root({sock.get(), *index, ifname});
}

Shaper::~Shaper() {
  if (!owned_ || !sock_) {
    return;
  }
  if (auto ok = detail::delete_root({sock_.get(), ifindex_, ifname_}); !ok) {
    std::fprintf(stderr, "contend: %s\n", ok.error().message.c_str());
  }
}

Result<void> Shaper::set_rate(double rate_bps) {
  if (!(rate_bps > 0)) {
    return make_error(Errc::kInvalidArgument, ifname_ + ": a rate must be positive");
  }
  return discipline_->set_rate({sock_.get(), ifindex_, ifname_}, rate_bps);
}

Result<void> Shaper::set_peer_rate(std::size_t peer, double rate_bps) {
  if (per_peer_ == nullptr) {
    return make_error(Errc::kInvalidArgument, ifname_ + ": not shaped per peer (cluster mode)");
  }
  return per_peer_->set_peer_rate({sock_.get(), ifindex_, ifname_}, peer, rate_bps);
}

Result<std::vector<ClassStats>> Shaper::stats(nl_cache* qdiscs) const {
  return discipline_->stats({sock_.get(), ifindex_, ifname_, qdiscs});
}

Result<void> probe_netem() {
  return detail::on_helper_thread("probing for netem", []() -> Result<void> {
    if (::unshare(CLONE_NEWNET) != 0) {
      return errno_error(errno, "probing for netem: unshare(CLONE_NEWNET)");
    }
    auto sock = open_route_socket();
    if (!sock) {
      return sock.error();
    }
    rtnl_qdisc* q = rtnl_qdisc_alloc();
    rtnl_tc_set_ifindex(TC_CAST(q), 1);  // lo
    rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
    rtnl_tc_set_kind(TC_CAST(q), "netem");
    const int rc = rtnl_qdisc_add(sock->get(), q, NLM_F_CREATE);
    rtnl_qdisc_put(q);
    if (rc == -NLE_OBJ_NOTFOUND || rc == -NLE_OPNOTSUPP) {
      return make_error(Errc::kUnsupported,
                        "the kernel lacks the netem qdisc (sch_netem), which link delay and loss need: " +
                            std::string(nl_geterror(-rc)));
    }
    if (rc < 0) {
      return nl_error(rc, "probing for netem: rtnl_qdisc_add(lo root netem)");
    }
    return {};
  });
}

}  // namespace contend::emulator
