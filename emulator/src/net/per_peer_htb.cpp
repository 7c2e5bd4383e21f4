#include "net/per_peer_htb.h"

namespace contend::emulator {
namespace {

constexpr std::uint32_t kDefaultMinor = 2;

std::uint32_t peer_minor(std::size_t peer) {
  return kFirstPeerClassMinor + static_cast<std::uint32_t>(peer);
}

// A peer's class: guaranteed and capped at its rate, nothing to borrow.
HtbClass flat(double bps) {
  return htb_class(bps, bps, 0);
}

// "peer 198.18.0.2", or "peer 198.18.0.2 and 62 more" for a NIC's class.
std::string class_name(const PeerRate& p) {
  std::string out = "peer " + (p.addresses.empty() ? std::string("(none)") : p.addresses.front());
  return p.addresses.size() > 1 ? out + " and " + std::to_string(p.addresses.size() - 1) + " more" : out;
}

}  // namespace

Result<void> PerPeerHtb::install(const detail::TcTarget& tc, double /*rate_bps*/) {
  if (auto ok = detail::add_htb_root(tc, kDefaultMinor); !ok) {
    return ok;
  }
  auto ok = build(tc);
  if (!ok) {
    (void)detail::delete_root(tc);
  }
  return ok;
}

Result<void> PerPeerHtb::build(const detail::TcTarget& tc) {
  if (auto ok = detail::put_htb_class(tc, kDefaultMinor, 0, flat(default_bps_), true); !ok) {
    return ok;
  }
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (auto ok = detail::put_htb_class(tc, peer_minor(i), 0, flat(peers_[i].rate_bps), true); !ok) {
      return ok;
    }
    for (const std::string& address : peers_[i].addresses) {
      if (auto ok = detail::add_u32(tc, peer_minor(i), address, false); !ok) {
        return ok;
      }
    }
  }
  return {};
}

Result<void> PerPeerHtb::set_rate(const detail::TcTarget& tc, double /*rate_bps*/) {
  return make_error(Errc::kInvalidArgument, tc.ifname + ": cluster mode shapes per peer; set a peer's rate");
}

Result<void> PerPeerHtb::set_peer_rate(const detail::TcTarget& tc, std::size_t peer, double rate_bps) {
  if (peer >= peers_.size()) {
    return make_error(Errc::kInvalidArgument, tc.ifname + ": no peer " + std::to_string(peer));
  }
  peers_[peer].rate_bps = rate_bps;
  return detail::put_htb_class(tc, peer_minor(peer), 0, flat(rate_bps), false);
}

Result<std::vector<ClassStats>> PerPeerHtb::stats(const detail::TcTarget& tc) const {
  std::vector<std::pair<std::uint32_t, std::string>> wanted = {{kDefaultMinor, "default"}};
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    wanted.emplace_back(peer_minor(i), class_name(peers_[i]));
  }
  auto out = detail::htb_class_stats(tc, wanted);
  if (out) {
    for (ClassStats& s : *out) {
      s.link_level = s.minor != kDefaultMinor;  // each peer's class is one link
    }
  }
  return out;
}

}  // namespace contend::emulator
