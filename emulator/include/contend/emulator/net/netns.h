#pragma once
// Named network namespaces (/run/netns/<name>, as `ip netns` makes them) and netlink route
// sockets bound to one, all without forking `ip`. Works as root, or inside `unshare -Urnm` with a
// tmpfs over /run/netns. Thread-safe: each call but enter_netns uses a short-lived helper thread
// for setns; enter_netns moves the thread that calls it.

#include <functional>
#include <memory>
#include <string>

#include "contend/common/fd.h"
#include "contend/common/result.h"

struct nl_sock;

namespace contend::emulator {

struct NlSocketDeleter {
  void operator()(nl_sock* s) const;
};
// A connected NETLINK_ROUTE socket; it stays in the namespace it was opened in.
using NlSocket = std::unique_ptr<nl_sock, NlSocketDeleter>;

// The one place libnl error codes become Errors: "<what>: <nl_geterror>", NLE_PERM ->
// kPermission, NLE_OBJ_NOTFOUND/NLE_NODEV -> kNotFound, NLE_EXIST -> kInvalidArgument,
// NLE_OPNOTSUPP -> kUnsupported, else kIo.
Error nl_error(int code, const std::string& what);

// A route socket in the caller's namespace.
Result<NlSocket> open_route_socket();
// A route socket in the namespace `netns_fd` refers to.
Result<NlSocket> open_route_socket_in(const Fd& netns_fd);

std::string netns_path(const std::string& name);  // "/run/netns/<name>"

// Creates the named namespace; fails with kInvalidArgument when it exists already, kPermission
// without CAP_SYS_ADMIN. Returns an fd on it. The caller owns removal (remove_netns).
Result<Fd> create_netns(const std::string& name);
// Opens an existing named namespace; kNotFound when there is none.
Result<Fd> open_netns(const std::string& name);
// Unmounts and unlinks the name; the namespace, its interfaces and qdiscs go when the last
// reference (process, socket, fd) closes. Succeeds when the name does not exist. The namespace's
// hosts file (write_netns_hosts) goes with it, also when the name could not be removed.
Result<void> remove_netns(const std::string& name);

// Writes /etc/netns/<name>/hosts, which `ip netns exec <name>` mounts over /etc/hosts (iproute2's
// convention): names that resolve to the node's addresses for programs run in the namespace
// (gloo and Open MPI look up this machine's hostname). Replaced atomically; remove_netns removes
// it and its folder (left when it holds a file of someone else's).
Result<void> write_netns_hosts(const std::string& name, const std::string& content);
std::string netns_etc_dir(const std::string& name);  // "/etc/netns/<name>"
// Removes what write_netns_hosts wrote for `name`; succeeds when there is none.
Result<void> remove_netns_hosts(const std::string& name);
bool netns_exists(const std::string& name);

// Moves the calling thread (only it) into the namespace `netns_fd` refers to, for good: its new
// sockets live there. The one place contend calls setns.
Result<void> enter_netns(const Fd& netns_fd);
// The same for a named namespace; kNotFound when there is none; "" leaves the thread where it is.
Result<void> enter_netns(const std::string& name);

// Runs `fn` on a helper thread that has entered `netns_fd` (setns); returns its result.
Result<void> run_in_netns(const Fd& netns_fd, const std::function<Result<void>()>& fn);

}  // namespace contend::emulator
