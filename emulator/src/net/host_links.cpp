#include "contend/emulator/net/host_links.h"

namespace contend::emulator {

Result<HostLinks> HostLinks::create(const Scenario& scenario, const HostPlan& plan, NlSocket sock) {
  if (scenario.node_index(plan.node) < 0) {
    return make_error(Errc::kInvalidArgument, scenario.source + ": no node \"" + plan.node + "\"");
  }
  std::vector<PeerRate> peers;
  std::vector<std::string> links;
  for (const LinkSpec& l : scenario.links) {
    const bool from_here = l.from == plan.node && l.direction != Direction::kBackward;
    const bool to_here = l.to == plan.node && l.direction != Direction::kForward;
    if (!from_here && !to_here) {
      continue;
    }
    const std::string& peer = from_here ? l.to : l.from;
    auto it = plan.addresses.find(peer);
    if (it == plan.addresses.end()) {
      return make_error(Errc::kInvalidArgument, "link " + l.name + ": no address for peer node \"" + peer +
                                                    "\" (give --peer " + peer + "=ADDRESS)");
    }
    peers.push_back({it->second, l.rate_bps});
    links.push_back(l.name);
  }
  auto shaper = Shaper::install_per_peer(std::move(sock), plan.ifname, peers, plan.default_bps);
  if (!shaper) {
    return shaper.error();
  }
  return HostLinks(std::move(*shaper), plan.node, std::move(links));
}

Result<void> HostLinks::set_rate(const std::string& link, double rate_bps) {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (links_[i] == link) {
      return shaper_.set_peer_rate(i, rate_bps);
    }
  }
  return {};
}

Result<void> HostLinks::set_link_state(const std::string& link, bool up) {
  return make_error(Errc::kUnsupported, "link " + link + " " + (up ? "up" : "down") +
                                            ": on a cluster a link is a host's NIC, which contend does not take " +
                                            "down (it would cut the host off); link states play on one host only");
}

Result<std::vector<LinkSample>> HostLinks::sample() {
  auto stats = shaper_.stats();
  if (!stats) {
    return stats.error();
  }
  std::vector<LinkSample> out;
  for (const ClassStats& c : *stats) {
    const std::string link = c.minor >= kFirstPeerClassMinor && c.minor - kFirstPeerClassMinor < links_.size()
                                 ? links_[c.minor - kFirstPeerClassMinor]
                                 : std::string("(other)");
    out.push_back({link, node_, c});
  }
  return out;
}

}  // namespace contend::emulator
