#include "contend/emulator/net/topology.h"

#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "net/fabric_routes.h"
#include "net/rtnl.h"

namespace contend::emulator {

namespace {
bool name_chars(const std::string& s, std::size_t most) {
  return !s.empty() && s.size() <= most && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}
}  // namespace

bool valid_run_name(const std::string& run) {
  return name_chars(run, 64);
}

bool run_made(const std::string& run, const std::string& netns) {
  const std::string own = switch_netns_of(run);
  if (!valid_run_name(run) || netns.rfind(own, 0) != 0) {
    return false;
  }
  return netns == own || (netns[own.size()] == '.' && name_chars(netns.substr(own.size() + 1), 8));  // scenario.h
}

std::string strip_prefix_length(const std::string& cidr) {
  return cidr.substr(0, cidr.find('/'));
}

std::string node_netns(const std::string& run, const std::string& node) {
  return std::string(kNetnsPrefix) + run + "." + node;
}

std::string switch_netns_of(const std::string& run) {
  return std::string(kNetnsPrefix) + run;
}

std::optional<std::string> netns_run(const std::string& netns) {
  if (netns.rfind(kNetnsPrefix, 0) != 0 || netns.size() == kNetnsPrefix.size()) {
    return std::nullopt;
  }
  const std::string rest = netns.substr(kNetnsPrefix.size());
  return rest.substr(0, rest.find('.'));
}

std::vector<std::string> TopologyPlan::namespaces() const {
  std::vector<std::string> out;
  for (const auto* group : {&nodes, &switches}) {
    for (const auto& [name, ns] : *group) {
      out.push_back(ns);
    }
  }
  out.push_back(switch_netns);
  return out;
}

const LinkPlan* TopologyPlan::find_link(const std::string& name) const {
  for (const auto& l : links) {
    if (l.link == name) {
      return &l;
    }
  }
  return nullptr;
}

namespace {

// Link i's plan: 198.18.a.b/30 with a = i / 64, b = 4 (i mod 64), and background addresses
// 198.19.a.b/32 unless the link joins a switch (a fabric port).
LinkPlan plan_link(const Scenario& scenario, const std::string& run, std::size_t i) {
  const LinkSpec& spec = scenario.links[i];
  const std::string net = std::to_string(i / 64) + ".";
  const bool background = !detail::fabric_link(scenario, spec);
  const auto addr = [&](const char* prefix, int host, const char* length) {
    return std::string(prefix) + net + std::to_string((i % 64) * 4 + host) + length;
  };
  LinkPlan l;
  l.link = spec.name;
  l.from = {spec.from, node_netns(run, spec.from), "c" + std::to_string(i) + "-" + spec.to, addr("198.18.", 1, "/30"),
            background ? addr("198.19.", 1, "/32") : ""};
  l.to = {spec.to, node_netns(run, spec.to), "c" + std::to_string(i) + "-" + spec.from, addr("198.18.", 2, "/30"),
          background ? addr("198.19.", 2, "/32") : ""};
  l.shape_from = spec.direction != Direction::kBackward;
  l.shape_to = spec.direction != Direction::kForward;
  return l;
}

// Through a link between two hosts, each end reaches the other end's background address, from
// its own, and the other end's workload addresses on its other host-to-host links (a fabric
// routes its own).
void plan_neighbour_routes(TopologyPlan& plan) {
  for (const LinkPlan& l : plan.links) {
    if (l.from.background_address.empty()) {
      continue;  // a fabric port
    }
    for (const auto& [self, peer] : {std::pair{&l.from, &l.to}, std::pair{&l.to, &l.from}}) {
      plan.routes.push_back({self->netns,
                             peer->background_address,
                             {{strip_prefix_length(peer->address), self->ifname}},
                             strip_prefix_length(self->background_address)});
      for (const LinkPlan& other : plan.links) {
        for (const InterfacePlan* far : {&other.from, &other.to}) {
          const InterfacePlan* near = far == &other.from ? &other.to : &other.from;
          if (&other == &l || far->node != peer->node || near->node == self->node || far->background_address.empty()) {
            continue;  // the shared link, another link between the same two nodes, or a fabric port
          }
          plan.routes.push_back({self->netns,
                                 strip_prefix_length(far->address) + "/32",
                                 {{strip_prefix_length(peer->address), self->ifname}},
                                 ""});
        }
      }
    }
  }
}

}  // namespace

Result<void> fits_one_machine(const Scenario& scenario) {
  if (scenario.nodes.size() > kMaxHosts || scenario.switches.size() > kMaxSwitches) {
    return make_error(Errc::kInvalidArgument,
                      scenario.source + ": " + std::to_string(scenario.nodes.size()) + " hosts and " +
                          std::to_string(scenario.switches.size()) + " switches; one machine holds at most " +
                          std::to_string(kMaxHosts) + " hosts and " + std::to_string(kMaxSwitches) +
                          " switches as namespaces (`contend emu predict` takes the fabric as it is)");
  }
  return {};
}

TopologyPlan plan_topology(const Scenario& scenario, const std::string& run) {
  CONTEND_CHECK(valid_run_name(run), "invalid run name " + run);
  CONTEND_CHECK(scenario.links.size() <= 255 * 64, "too many links");
  TopologyPlan plan;
  plan.run = run;
  for (const auto& node : scenario.nodes) {
    plan.nodes.emplace_back(node, node_netns(run, node));
  }
  for (const auto& sw : scenario.switches) {
    plan.switches.emplace_back(sw, node_netns(run, sw));
  }
  plan.switch_netns = switch_netns_of(run);
  for (std::size_t i = 0; i < scenario.links.size(); ++i) {
    plan.links.push_back(plan_link(scenario, run, i));
  }
  plan_neighbour_routes(plan);
  for (RoutePlan& r : detail::fabric_routes(scenario, plan)) {
    plan.routes.push_back(std::move(r));
  }
  // The control bridge gives hosts that no link joins a way to each other; a fabric routes every
  // host to every other through shaped ports, and leaves no unshaped way for a job's bytes.
  for (std::size_t j = 0; j < scenario.nodes.size() && !scenario.has_fabric(); ++j) {
    plan.switch_ports.push_back({scenario.nodes[j], node_netns(run, scenario.nodes[j]), "cbr0",
                                 "198.18.255." + std::to_string(j + 1) + "/24", ""});
  }
  return plan;
}

Result<std::uint64_t> control_bridge_bytes(const TopologyPlan& plan) {
  std::uint64_t total = 0;
  for (const InterfacePlan& port : plan.switch_ports) {
    auto fd = open_netns(port.netns);
    auto sock = fd ? open_route_socket_in(*fd) : Result<NlSocket>(fd.error());
    auto bytes = sock ? detail::sent_bytes(sock->get(), port.ifname) : Result<std::uint64_t>(sock.error());
    if (!bytes) {
      return with_context(bytes.error(), port.netns);
    }
    total += *bytes;
  }
  return total;
}

namespace {

const std::string kLoopback = "lo";

class Builder {
 public:
  Builder(const TopologyPlan& plan, std::vector<std::string>& owned, const std::atomic<bool>* cancel)
      : plan_(plan), owned_(owned), cancel_(cancel) {}

  Result<void> build() {
    auto root = open_route_socket();
    if (!root) {
      return root.error();
    }
    root_ = std::move(*root);
    for (const std::string& ns : plan_.namespaces()) {
      if (auto ok = namespace_up(ns); !ok) {
        return ok;
      }
    }
    for (const LinkPlan& l : plan_.links) {
      if (auto ok = veth(l.from, l.to); !ok) {
        return ok;
      }
      for (const InterfacePlan* end : {&l.from, &l.to}) {
        if (auto ok = configure(*end); !ok) {
          return ok;
        }
      }
    }
    for (const RoutePlan& r : plan_.routes) {
      if (auto ok = detail::add_route(socks_.at(r.netns).get(), r); !ok) {
        return with_context(ok.error(), r.netns);
      }
    }
    return switch_up();
  }

 private:
  // The switch: a bridge in its own namespace, a port for every node (none on a fabric).
  Result<void> switch_up() {
    if (plan_.switch_ports.empty()) {
      return {};
    }
    nl_sock* sw = socks_.at(plan_.switch_netns).get();
    rtnl_link* bridge = rtnl_link_bridge_alloc();
    rtnl_link_set_name(bridge, "br0");
    const int rc = rtnl_link_add(sw, bridge, NLM_F_CREATE | NLM_F_EXCL);
    rtnl_link_put(bridge);
    if (rc < 0) {
      return nl_error(rc, "rtnl_link_add(" + plan_.switch_netns + " br0 bridge)");
    }
    if (auto ok = detail::set_link_up(sw, "br0"); !ok) {
      return ok;
    }
    auto bridge_index = detail::ifindex_of(sw, "br0");
    if (!bridge_index) {
      return bridge_index.error();
    }
    for (const InterfacePlan& port : plan_.switch_ports) {
      const InterfacePlan sw_end{"sw", plan_.switch_netns, "p-" + port.node, "", ""};
      if (auto ok = veth(port, sw_end); !ok) {
        return ok;
      }
      auto index = detail::ifindex_of(sw, sw_end.ifname);
      if (!index) {
        return index.error();
      }
      if (int e = rtnl_link_enslave_ifindex(sw, *bridge_index, *index); e < 0) {
        return nl_error(e, "rtnl_link_enslave_ifindex(br0, " + sw_end.ifname + ")");
      }
      if (auto ok = detail::set_link_up(sw, sw_end.ifname); !ok) {
        return ok;
      }
      if (auto ok = configure(port); !ok) {
        return ok;
      }
    }
    return {};
  }

  Result<void> cancelled() const {
    if (cancel_ != nullptr && cancel_->load()) {
      return make_error(Errc::kInternal, "interrupted");
    }
    return {};
  }

  Result<void> namespace_up(const std::string& ns) {
    if (auto ok = cancelled(); !ok) {
      return ok;
    }
    auto fd = create_netns(ns);
    if (!fd) {
      return fd.error();
    }
    owned_.push_back(ns);
    auto sock = open_route_socket_in(*fd);
    if (!sock) {
      return with_context(sock.error(), ns);
    }
    if (auto ok = detail::set_link_up(sock->get(), "lo"); !ok) {
      return with_context(ok.error(), ns);
    }
    socks_[ns] = std::move(*sock);
    fds_.emplace(ns, std::move(*fd));
    return forwarding(ns);
  }

  // A fabric's switch forwards, spreads flows over equal-cost routes by their 5-tuple, takes
  // packets on any port (paths back may differ from paths out), and drops a next hop whose link
  // is down, so its flows move to the others.
  Result<void> forwarding(const std::string& ns) {
    const auto is_ns = [&](const auto& sw) { return sw.second == ns; };
    if (std::none_of(plan_.switches.begin(), plan_.switches.end(), is_ns)) {
      return {};
    }
    for (const auto& [key, value] :
         {std::pair{"net/ipv4/ip_forward", "1"}, std::pair{"net/ipv4/fib_multipath_hash_policy", "1"},
          std::pair{"net/ipv4/conf/all/rp_filter", "0"}, std::pair{"net/ipv4/conf/default/rp_filter", "0"},
          std::pair{"net/ipv4/conf/all/ignore_routes_with_linkdown", "1"},
          std::pair{"net/ipv4/conf/default/ignore_routes_with_linkdown", "1"}}) {
      if (auto ok = detail::set_sysctl(fds_.at(ns), key, value); !ok) {
        return with_context(ok.error(), ns);
      }
    }
    return {};
  }

  // A veth pair created directly in the two namespaces.
  Result<void> veth(const InterfacePlan& a, const InterfacePlan& b) {
    if (auto ok = cancelled(); !ok) {
      return ok;
    }
    rtnl_link* link = rtnl_link_veth_alloc();
    if (link == nullptr) {
      return make_error(Errc::kInternal, "rtnl_link_veth_alloc: out of memory");
    }
    rtnl_link_set_name(link, a.ifname.c_str());
    rtnl_link_set_ns_fd(link, fds_.at(a.netns).get());
    rtnl_link* peer = rtnl_link_veth_get_peer(link);
    rtnl_link_set_name(peer, b.ifname.c_str());
    rtnl_link_set_ns_fd(peer, fds_.at(b.netns).get());
    rtnl_link_put(peer);
    const int rc = rtnl_link_add(root_.get(), link, NLM_F_CREATE | NLM_F_EXCL);
    rtnl_link_veth_release(link);
    if (rc < 0) {
      return nl_error(rc, "rtnl_link_add(veth " + a.netns + "/" + a.ifname + " <-> " + b.netns + "/" + b.ifname + ")");
    }
    return {};
  }

  Result<void> configure(const InterfacePlan& end) {
    nl_sock* sock = socks_.at(end.netns).get();
    // The background address lives on lo, not on the link: a program that lists its interfaces
    // (Open MPI) then sees one address per link and never takes the background one for a peer's.
    for (const auto& [cidr, ifname] :
         {std::pair{&end.address, &end.ifname}, std::pair{&end.background_address, &kLoopback}}) {
      if (!cidr->empty()) {
        if (auto ok = detail::add_address(sock, *ifname, *cidr); !ok) {
          return with_context(ok.error(), end.netns);
        }
      }
    }
    return detail::set_link_up(sock, end.ifname);
  }

  const TopologyPlan& plan_;
  std::vector<std::string>& owned_;
  const std::atomic<bool>* cancel_;
  NlSocket root_;
  std::map<std::string, NlSocket> socks_;
  std::map<std::string, Fd> fds_;
};

}  // namespace

Result<Topology> Topology::create(const TopologyPlan& plan, const std::atomic<bool>* cancel) {
  for (const std::string& ns : plan.namespaces()) {
    if (netns_exists(ns)) {
      return make_error(Errc::kInvalidArgument, "run " + plan.run + " is up already (" + netns_path(ns) +
                                                    " exists); `contend emu down --run " + plan.run + "` first");
    }
  }
  Topology topology(plan);
  Builder builder(plan, topology.owned_, cancel);
  if (auto ok = builder.build(); !ok) {
    return ok.error();  // topology's destructor removes what was made
  }
  return topology;
}

Topology::Topology(Topology&& other) noexcept : plan_(std::move(other.plan_)), owned_(std::move(other.owned_)) {
  other.owned_.clear();
}

Topology::~Topology() {
  if (auto removed = remove_namespaces(owned_); !removed) {
    std::fprintf(stderr, "contend: %s\n", removed.error().message.c_str());
  }
}

Result<std::size_t> remove_namespaces(const std::vector<std::string>& namespaces) {
  std::size_t removed = 0;
  Result<void> first;
  for (auto it = namespaces.rbegin(); it != namespaces.rend(); ++it) {
    if (!netns_exists(*it)) {
      if (auto ok = remove_netns_hosts(*it); !ok) {  // a hosts file outlives its namespace's name
        first = first.ok() ? ok : first;
      }
      continue;
    }
    if (auto ok = remove_netns(*it); !ok) {
      first = first.ok() ? ok : first;
    } else {
      ++removed;
    }
  }
  if (!first) {
    return first.error();
  }
  return removed;
}

}  // namespace contend::emulator
