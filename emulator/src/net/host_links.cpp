#include "contend/emulator/net/host_links.h"

namespace contend::emulator {

namespace {

// Where `peer`'s traffic goes from this host: the peer's address, or, when the peer is a switch
// (a fabric's leaf: the link is this host's NIC), every other host's address.
Result<std::vector<std::string>> addresses_behind(const Scenario& s, const HostPlan& plan, const LinkSpec& l,
                                                  const std::string& peer) {
  if (s.is_switch(peer)) {
    std::vector<std::string> out;
    for (const auto& [node, address] : plan.addresses) {
      out.push_back(address);
    }
    if (out.empty()) {
      return make_error(Errc::kInvalidArgument, "link " + l.name + " joins " + plan.node + "'s NIC to switch " + peer +
                                                    ": give the other hosts' addresses (--peer NODE=ADDRESS)");
    }
    return out;
  }
  auto it = plan.addresses.find(peer);
  if (it == plan.addresses.end()) {
    return make_error(Errc::kInvalidArgument, "link " + l.name + ": no address for peer node \"" + peer +
                                                  "\" (give --peer " + peer + "=ADDRESS)");
  }
  return std::vector<std::string>{it->second};
}

}  // namespace

Result<void> check_cluster_host(const Scenario& s, const std::string& node) {
  if (s.is_switch(node)) {
    return make_error(Errc::kInvalidArgument,
                      s.source + ": \"" + node + "\" is a switch: on a cluster the switches are the cluster's own");
  }
  if (s.node_index(node) < 0) {
    return make_error(Errc::kInvalidArgument, s.source + ": no node \"" + node + "\"");
  }
  std::vector<std::string> links;
  for (const LinkSpec& l : s.links) {
    if (l.from == node || l.to == node) {
      links.push_back(l.name);
    }
  }
  if (!s.has_fabric() || (links.size() == 1 && !leaf_of(s, node).empty())) {
    return {};
  }
  std::string named;
  for (const std::string& l : links) {
    named += (named.empty() ? "" : ", ") + l;
  }
  return make_error(Errc::kUnsupported, s.source + ": host " + node + " has " + std::to_string(links.size()) +
                                            " link(s) (" + named + "): on a cluster a fabric's host shapes its one " +
                                            "interface, which stands for its one link, to its leaf");
}

Result<HostLinks> HostLinks::create(const Scenario& scenario, const HostPlan& plan, NlSocket sock) {
  if (auto ok = check_cluster_host(scenario, plan.node); !ok) {
    return ok.error();
  }
  std::vector<PeerRate> peers;
  std::vector<std::string> links;
  for (const LinkSpec& l : scenario.links) {
    const bool from_here = l.from == plan.node && l.direction != Direction::kBackward;
    const bool to_here = l.to == plan.node && l.direction != Direction::kForward;
    if (!from_here && !to_here) {
      continue;
    }
    auto addresses = addresses_behind(scenario, plan, l, from_here ? l.to : l.from);
    if (!addresses) {
      return addresses.error();
    }
    peers.push_back({std::move(*addresses), l.rate_bps});
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
