#include "contend/emulator/net/netns.h"

#include <fcntl.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <thread>

#include "contend/common/fd.h"
#include "threads.h"

namespace contend::emulator {

void NlSocketDeleter::operator()(nl_sock* s) const {
  nl_socket_free(s);
}

Error nl_error(int code, const std::string& what) {
  const int c = code < 0 ? -code : code;
  Errc errc = Errc::kIo;
  switch (c) {
    case NLE_PERM:
      errc = Errc::kPermission;
      break;
    case NLE_OBJ_NOTFOUND:
    case NLE_NODEV:
      errc = Errc::kNotFound;
      break;
    case NLE_EXIST:
      errc = Errc::kInvalidArgument;
      break;
    case NLE_OPNOTSUPP:
      errc = Errc::kUnsupported;
      break;
    default:
      break;
  }
  return make_error(errc, what + ": " + nl_geterror(c));
}

Result<NlSocket> open_route_socket() {
  NlSocket sock(nl_socket_alloc());
  if (!sock) {
    return make_error(Errc::kInternal, "nl_socket_alloc: out of memory");
  }
  if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0) {
    return nl_error(rc, "nl_connect(NETLINK_ROUTE)");
  }
  return sock;
}

Result<void> enter_netns(const Fd& netns_fd) {
  if (::setns(netns_fd.get(), CLONE_NEWNET) != 0) {
    return errno_error(errno, "setns(CLONE_NEWNET)");
  }
  return {};
}

Result<void> enter_netns(const std::string& name) {
  if (name.empty()) {
    return {};
  }
  auto fd = open_netns(name);
  if (!fd) {
    return fd.error();
  }
  if (auto ok = enter_netns(*fd); !ok) {
    return with_context(ok.error(), name);
  }
  return {};
}

Result<void> run_in_netns(const Fd& netns_fd, const std::function<Result<void>()>& fn) {
  return detail::on_helper_thread("a call in a network namespace", [&]() -> Result<void> {
    if (auto ok = enter_netns(netns_fd); !ok) {
      return ok;
    }
    return fn();
  });
}

Result<NlSocket> open_route_socket_in(const Fd& netns_fd) {
  NlSocket sock;
  auto ok = run_in_netns(netns_fd, [&]() -> Result<void> {
    auto s = open_route_socket();
    if (!s) {
      return s.error();
    }
    sock = std::move(*s);
    return {};
  });
  if (!ok) {
    return ok.error();
  }
  return sock;
}

std::string netns_path(const std::string& name) {
  return "/run/netns/" + name;
}

bool netns_exists(const std::string& name) {
  return ::access(netns_path(name).c_str(), F_OK) == 0;
}

namespace {

// /run/netns as `ip netns add` leaves it: a shared mount of its own (bound onto itself the first
// time). Were it a plain folder, the first `ip netns add` after ours would bind it over our
// namespaces' mounts, hiding them from their own removal (unlink: EBUSY) until the next boot.
Result<void> ensure_netns_dir() {
  if (::mkdir("/run/netns", 0755) != 0 && errno != EEXIST) {
    return errno_error(errno, "mkdir(/run/netns)");
  }
  if (::mount("", "/run/netns", "none", MS_SHARED | MS_REC, nullptr) == 0) {
    return {};
  }
  if (errno != EINVAL) {
    return errno_error(errno, "mount --make-shared /run/netns");
  }
  if (::mount("/run/netns", "/run/netns", "none", MS_BIND | MS_REC, nullptr) != 0 ||
      ::mount("", "/run/netns", "none", MS_SHARED | MS_REC, nullptr) != 0) {
    return errno_error(errno, "mount --bind /run/netns /run/netns (as `ip netns add` does)");
  }
  return {};
}

}  // namespace

Result<Fd> create_netns(const std::string& name) {
  if (auto ok = ensure_netns_dir(); !ok) {
    return ok.error();
  }
  const std::string path = netns_path(name);
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
    if (fd < 0) {
      if (errno == EEXIST) {
        return make_error(Errc::kInvalidArgument, "network namespace " + name + " exists already (" + path + ")");
      }
      return errno_error(errno, "create " + path);
    }
    ::close(fd);
  }
  // unshare() moves only the calling thread, so a helper thread makes the namespace and pins it
  // with a bind mount, as `ip netns add` does, then exits.
  const Result<void> made = detail::on_helper_thread("creating " + name, [&]() -> Result<void> {
    if (::unshare(CLONE_NEWNET) != 0) {
      return errno_error(errno, "unshare(CLONE_NEWNET) for " + name);
    }
    if (::mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
      return errno_error(errno, "mount --bind /proc/thread-self/ns/net " + path);
    }
    return {};
  });
  if (!made) {
    ::unlink(path.c_str());
    return made.error();
  }
  return Fd::open(path, O_RDONLY);
}

Result<Fd> open_netns(const std::string& name) {
  auto fd = Fd::open(netns_path(name), O_RDONLY);
  if (!fd && fd.error().code == Errc::kNotFound) {
    return make_error(Errc::kNotFound, "network namespace " + name + " does not exist");
  }
  return fd;
}

Result<void> remove_netns(const std::string& name) {
  const std::string path = netns_path(name);
  Result<void> out;
  if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    out = errno_error(errno, "umount " + path);
  } else if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    const int err = errno;
    Error e = errno_error(err, "unlink " + path);
    if (err == EBUSY) {
      e.message +=
          " (still mounted in another mount namespace: a long-lived process started by `ip netns exec` "
          "or unshare while the namespace existed holds a copy; `contend emu down` again once it ends)";
    }
    out = e;
  }
  auto hosts = remove_netns_hosts(name);  // whatever became of the namespace
  return out.ok() ? hosts : out;
}

Result<void> remove_netns_hosts(const std::string& name) {
  const std::string etc = netns_etc_dir(name);
  if (::unlink((etc + "/hosts").c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
    return errno_error(errno, "unlink " + etc + "/hosts");
  }
  if (::rmdir(etc.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != ENOTDIR) {
    return errno_error(errno, "rmdir " + etc);
  }
  return {};
}

std::string netns_etc_dir(const std::string& name) {
  return "/etc/netns/" + name;
}

Result<void> write_netns_hosts(const std::string& name, const std::string& content) {
  const std::string etc = netns_etc_dir(name);
  for (const std::string& dir : {std::string("/etc/netns"), etc}) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return errno_error(errno, "mkdir " + dir);
    }
  }
  return write_file_atomic(etc + "/hosts", content);
}

}  // namespace contend::emulator
