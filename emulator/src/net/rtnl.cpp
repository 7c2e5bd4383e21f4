#include "net/rtnl.h"

#include <fcntl.h>
#include <net/if.h>
#include <unistd.h>

#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <cerrno>
#include <cstring>

namespace contend::emulator::detail {

Result<int> ifindex_of(nl_sock* sock, const std::string& ifname) {
  rtnl_link* link = nullptr;
  if (int rc = rtnl_link_get_kernel(sock, 0, ifname.c_str(), &link); rc < 0) {
    return nl_error(rc, "rtnl_link_get_kernel(" + ifname + ")");
  }
  const int index = rtnl_link_get_ifindex(link);
  rtnl_link_put(link);
  return index;
}

Result<std::uint64_t> sent_bytes(nl_sock* sock, const std::string& ifname) {
  rtnl_link* link = nullptr;
  if (int rc = rtnl_link_get_kernel(sock, 0, ifname.c_str(), &link); rc < 0) {
    return nl_error(rc, "rtnl_link_get_kernel(" + ifname + ")");
  }
  const std::uint64_t bytes = rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES);
  rtnl_link_put(link);
  return bytes;
}

Result<void> set_link_up(nl_sock* sock, const std::string& ifname) {
  return set_link_state(sock, ifname, true);
}

Result<void> set_link_state(nl_sock* sock, const std::string& ifname, bool up) {
  rtnl_link* orig = nullptr;
  if (int rc = rtnl_link_get_kernel(sock, 0, ifname.c_str(), &orig); rc < 0) {
    return nl_error(rc, "rtnl_link_get_kernel(" + ifname + ")");
  }
  rtnl_link* change = rtnl_link_alloc();
  if (up) {
    rtnl_link_set_flags(change, IFF_UP);
  } else {
    rtnl_link_unset_flags(change, IFF_UP);
  }
  const int rc = rtnl_link_change(sock, orig, change, 0);
  rtnl_link_put(change);
  rtnl_link_put(orig);
  if (rc < 0) {
    return nl_error(rc, "rtnl_link_change(" + ifname + (up ? " up)" : " down)"));
  }
  return {};
}

Result<void> add_address(nl_sock* sock, const std::string& ifname, const std::string& cidr) {
  auto index = ifindex_of(sock, ifname);
  if (!index) {
    return index.error();
  }
  nl_addr* local = nullptr;
  if (int rc = nl_addr_parse(cidr.c_str(), AF_INET, &local); rc < 0) {
    return nl_error(rc, "nl_addr_parse(" + cidr + ")");
  }
  rtnl_addr* addr = rtnl_addr_alloc();
  rtnl_addr_set_ifindex(addr, *index);
  rtnl_addr_set_local(addr, local);
  const int rc = rtnl_addr_add(sock, addr, 0);
  rtnl_addr_put(addr);
  nl_addr_put(local);
  if (rc < 0) {
    return nl_error(rc, "rtnl_addr_add(" + ifname + " " + cidr + ")");
  }
  return {};
}

namespace {

// Adds a next hop through `hop` to `route` (which owns it then).
Result<void> add_next_hop(nl_sock* sock, rtnl_route* route, const NextHop& hop) {
  auto index = ifindex_of(sock, hop.ifname);
  if (!index) {
    return index.error();
  }
  nl_addr* gateway = nullptr;
  if (int rc = nl_addr_parse(hop.via.c_str(), AF_INET, &gateway); rc < 0) {
    return nl_error(rc, "nl_addr_parse(" + hop.via + ")");
  }
  rtnl_nexthop* nh = rtnl_route_nh_alloc();
  rtnl_route_nh_set_ifindex(nh, *index);
  rtnl_route_nh_set_gateway(nh, gateway);
  nl_addr_put(gateway);
  rtnl_route_add_nexthop(route, nh);
  return {};
}

std::string hops_text(const RoutePlan& r) {
  std::string out;
  for (const NextHop& h : r.hops) {
    out += " via " + h.via + " dev " + h.ifname;
  }
  return out;
}

}  // namespace

Result<void> add_route(nl_sock* sock, const RoutePlan& r, bool replace) {
  nl_addr* dst = nullptr;
  if (int rc = nl_addr_parse(r.destination.c_str(), AF_INET, &dst); rc < 0) {
    return nl_error(rc, "nl_addr_parse(" + r.destination + ")");
  }
  nl_addr* preferred = nullptr;
  if (int rc = r.source.empty() ? 0 : nl_addr_parse(r.source.c_str(), AF_INET, &preferred); rc < 0) {
    nl_addr_put(dst);
    return nl_error(rc, "nl_addr_parse(" + r.source + ")");
  }
  rtnl_route* route = rtnl_route_alloc();
  rtnl_route_set_family(route, AF_INET);
  rtnl_route_set_dst(route, dst);
  nl_addr_put(dst);
  if (preferred != nullptr) {
    rtnl_route_set_pref_src(route, preferred);
    nl_addr_put(preferred);
  }
  Result<void> ok;
  for (const NextHop& hop : r.hops) {
    if (ok = add_next_hop(sock, route, hop); !ok) {
      break;
    }
  }
  const int rc = ok ? rtnl_route_add(sock, route, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL)) : 0;
  rtnl_route_put(route);
  if (!ok) {
    return ok;
  }
  if (rc < 0) {
    return nl_error(rc, "rtnl_route_add(" + r.destination + hops_text(r) + ")");
  }
  return {};
}

Result<void> delete_route(nl_sock* sock, const std::string& destination) {
  nl_addr* dst = nullptr;
  if (int rc = nl_addr_parse(destination.c_str(), AF_INET, &dst); rc < 0) {
    return nl_error(rc, "nl_addr_parse(" + destination + ")");
  }
  rtnl_route* route = rtnl_route_alloc();
  rtnl_route_set_family(route, AF_INET);
  rtnl_route_set_dst(route, dst);
  nl_addr_put(dst);
  const int rc = rtnl_route_delete(sock, route, 0);
  rtnl_route_put(route);
  if (rc < 0 && rc != -NLE_OBJ_NOTFOUND) {
    return nl_error(rc, "rtnl_route_delete(" + destination + ")");
  }
  return {};
}

Result<void> set_sysctl(const Fd& netns_fd, const std::string& key, const std::string& value) {
  return run_in_netns(netns_fd, [&]() -> Result<void> {
    const std::string path = "/proc/sys/" + key;
    auto fd = Fd::open(path, O_WRONLY);
    if (!fd) {
      return fd.error();
    }
    if (::write(fd->get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
      return make_error(Errc::kIo, "write(" + path + ", " + value + "): " + std::strerror(errno));
    }
    return {};
  });
}

}  // namespace contend::emulator::detail
