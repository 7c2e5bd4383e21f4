#include "contend/emulator/net/network.h"

#include "net/rtnl.h"

namespace contend::emulator {
namespace {

// The shaped ends of a planned link, in order (from, to).
std::vector<const InterfacePlan*> shaped_ends(const LinkPlan& l) {
  std::vector<const InterfacePlan*> out;
  if (l.shape_from) {
    out.push_back(&l.from);
  }
  if (l.shape_to) {
    out.push_back(&l.to);
  }
  return out;
}

Result<NlSocket> socket_for(const std::string& netns) {
  auto fd = open_netns(netns);
  if (!fd) {
    return fd.error();
  }
  return open_route_socket_in(*fd);
}

}  // namespace

Result<Network> Network::create(const Scenario& scenario, TopologyPlan plan, const std::atomic<bool>* cancel) {
  if (scenario.needs_netem()) {
    if (auto ok = probe_netem(); !ok) {
      return with_context(ok.error(), scenario.source);
    }
  }
  Network net;
  net.plan_ = std::move(plan);
  auto topology = Topology::create(net.plan_, cancel);
  if (!topology) {
    return topology.error();
  }
  net.topology_.emplace(std::move(*topology));
  auto ok = net.shape(scenario, [](NlSocket sock, const LinkSpec& spec, const InterfacePlan& end) {
    return Shaper::install(std::move(sock), end.ifname, spec, strip_prefix_length(end.background_address));
  });
  if (!ok) {
    return ok.error();
  }
  return net;
}

Result<Network> Network::attach(const Scenario& scenario, TopologyPlan plan) {
  Network net;
  net.plan_ = std::move(plan);
  auto ok = net.shape(scenario, [](NlSocket sock, const LinkSpec& spec, const InterfacePlan& end) {
    return Shaper::attach(std::move(sock), end.ifname, spec);
  });
  if (!ok) {
    return ok.error();
  }
  return net;
}

Result<void> Network::shape(
    const Scenario& scenario,
    const std::function<Result<Shaper>(NlSocket, const LinkSpec&, const InterfacePlan&)>& make) {
  for (const LinkSpec& spec : scenario.links) {
    const LinkPlan& l = *plan_.find_link(spec.name);
    for (const InterfacePlan* end : shaped_ends(l)) {
      auto sock = socket_for(end->netns);
      if (!sock) {
        return sock.error();
      }
      auto shaper = make(std::move(*sock), spec, *end);
      if (!shaper) {
        return with_context(shaper.error(), end->netns);
      }
      ends_[spec.name].push_back({end->node, std::move(*shaper)});
    }
  }
  return {};
}

Result<void> Network::set_rate(const std::string& link, double rate_bps) {
  auto it = ends_.find(link);
  if (it == ends_.end()) {
    return make_error(Errc::kNotFound, "no link " + link + " in run " + plan_.run);
  }
  for (ShapedEnd& end : it->second) {
    if (auto ok = end.shaper.set_rate(rate_bps); !ok) {
      return ok;
    }
  }
  return {};
}

Result<std::vector<LinkSample>> Network::sample() {
  std::vector<LinkSample> out;
  for (auto& [link, ends] : ends_) {
    for (ShapedEnd& end : ends) {
      auto stats = end.shaper.stats();
      if (!stats) {
        return stats.error();
      }
      for (ClassStats& s : *stats) {
        out.push_back({link, end.node, std::move(s)});
      }
    }
  }
  return out;
}

void Network::release() {
  for (auto& [link, ends] : ends_) {
    for (ShapedEnd& end : ends) {
      end.shaper.release();
    }
  }
  if (topology_) {
    topology_->release();
  }
}

}  // namespace contend::emulator
