#include "net/rtnl.h"

#include <net/if.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>

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

Result<void> set_link_up(nl_sock* sock, const std::string& ifname) {
  rtnl_link* orig = nullptr;
  if (int rc = rtnl_link_get_kernel(sock, 0, ifname.c_str(), &orig); rc < 0) {
    return nl_error(rc, "rtnl_link_get_kernel(" + ifname + ")");
  }
  rtnl_link* change = rtnl_link_alloc();
  rtnl_link_set_flags(change, IFF_UP);
  const int rc = rtnl_link_change(sock, orig, change, 0);
  rtnl_link_put(change);
  rtnl_link_put(orig);
  if (rc < 0) {
    return nl_error(rc, "rtnl_link_change(" + ifname + " up)");
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

Result<void> add_route(nl_sock* sock, const std::string& destination, const std::string& via, const std::string& ifname,
                       const std::string& source) {
  auto index = ifindex_of(sock, ifname);
  if (!index) {
    return index.error();
  }
  nl_addr* dst = nullptr;
  nl_addr* gateway = nullptr;
  if (int rc = nl_addr_parse(destination.c_str(), AF_INET, &dst); rc < 0) {
    return nl_error(rc, "nl_addr_parse(" + destination + ")");
  }
  if (int rc = nl_addr_parse(via.c_str(), AF_INET, &gateway); rc < 0) {
    nl_addr_put(dst);
    return nl_error(rc, "nl_addr_parse(" + via + ")");
  }
  nl_addr* preferred = nullptr;
  if (int rc = source.empty() ? 0 : nl_addr_parse(source.c_str(), AF_INET, &preferred); rc < 0) {
    nl_addr_put(dst);
    nl_addr_put(gateway);
    return nl_error(rc, "nl_addr_parse(" + source + ")");
  }
  rtnl_route* route = rtnl_route_alloc();
  rtnl_route_set_family(route, AF_INET);
  rtnl_route_set_dst(route, dst);
  if (preferred != nullptr) {
    rtnl_route_set_pref_src(route, preferred);
  }
  rtnl_nexthop* hop = rtnl_route_nh_alloc();
  rtnl_route_nh_set_ifindex(hop, *index);
  rtnl_route_nh_set_gateway(hop, gateway);
  rtnl_route_add_nexthop(route, hop);  // the route owns it now
  const int rc = rtnl_route_add(sock, route, NLM_F_CREATE | NLM_F_EXCL);
  rtnl_route_put(route);
  nl_addr_put(dst);
  nl_addr_put(gateway);
  if (preferred != nullptr) {
    nl_addr_put(preferred);
  }
  if (rc < 0) {
    return nl_error(rc, "rtnl_route_add(" + destination + " via " + via + " dev " + ifname + ")");
  }
  return {};
}

}  // namespace contend::emulator::detail
