#include "contend/emulator/net/processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <set>

#include "contend/common/fd.h"
#include "contend/emulator/net/netns.h"
#include "contend/emulator/net/topology.h"

namespace contend::emulator {
namespace {

// A namespace's identity: the device and inode of its nsfs file.
using NsKey = std::pair<dev_t, ino_t>;

std::optional<NsKey> key_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return NsKey{st.st_dev, st.st_ino};
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The namespace among `wanted` that one of `pid`'s threads is in, if any.
std::optional<std::string> netns_of(pid_t pid, const std::map<NsKey, std::string>& wanted) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  for (const std::string& tid : folder_entries(task)) {
    if (const auto key = key_of(task + "/" + tid + "/ns/net")) {
      if (const auto it = wanted.find(*key); it != wanted.end()) {
        return it->second;
      }
    }
  }
  return std::nullopt;
}

std::string command_of(pid_t pid) {
  std::string out(121, '\0');
  auto fd = Fd::open("/proc/" + std::to_string(pid) + "/cmdline", O_RDONLY);
  const ssize_t n = fd ? ::read(fd->get(), out.data(), out.size()) : -1;
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!out.empty() && out.back() == '\0') {
    out.pop_back();
  }
  std::replace(out.begin(), out.end(), '\0', ' ');
  return out.size() > 120 ? out.substr(0, 117) + "..." : out;
}

int pidfd_open(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

bool pidfd_signal(const Fd& pidfd, int sig) {
  return ::syscall(SYS_pidfd_send_signal, pidfd.get(), sig, nullptr, 0) == 0;
}

// Waits up to `timeout` for every process in `pidfds` to end (a pidfd reads as ready when its
// process has exited); returns those still running.
std::vector<Fd> wait_ended(std::vector<Fd> pidfds, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pidfds.empty()) {
    std::vector<pollfd> fds;
    for (const Fd& f : pidfds) {
      fds.push_back({f.get(), POLLIN, 0});
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      break;
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 100))) < 0 &&
        errno != EINTR) {
      break;
    }
    std::vector<Fd> running;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) {
        running.push_back(std::move(pidfds[i]));
      }
    }
    pidfds = std::move(running);
  }
  return pidfds;
}

// One look's processes ended: SIGTERM, SIGKILL after `grace`; how many ended.
std::size_t end_processes(const std::vector<NetnsProcess>& processes, std::chrono::milliseconds grace) {
  std::vector<Fd> signalled;
  for (const NetnsProcess& p : processes) {
    Fd pidfd(p.pid == ::getpid() ? -1 : pidfd_open(p.pid));
    if (!pidfd.valid()) {
      continue;  // gone already (or the caller itself)
    }
    // Checked after the pidfd pins the process: if the PID now names another one, it is left alone.
    const auto key = key_of(netns_path(p.netns));
    if (!key || !netns_of(p.pid, {{*key, p.netns}})) {
      continue;
    }
    if (pidfd_signal(pidfd, SIGTERM)) {
      signalled.push_back(std::move(pidfd));
    }
  }
  const std::size_t total = signalled.size();
  std::vector<Fd> stubborn = wait_ended(std::move(signalled), grace);
  for (const Fd& pidfd : stubborn) {
    (void)pidfd_signal(pidfd, SIGKILL);
  }
  return total - wait_ended(std::move(stubborn), grace).size();
}

}  // namespace

std::vector<std::string> contend_namespaces() {
  std::vector<std::string> out;
  for (const std::string& name : folder_entries("/run/netns")) {
    if (netns_run(name)) {
      out.push_back(name);
    }
  }
  return out;
}

std::vector<std::string> run_namespaces(const std::string& run) {
  std::vector<std::string> out;
  for (const std::string& name : contend_namespaces()) {
    if (netns_run(name) == run) {
      out.push_back(name);
    }
  }
  return out;
}

std::vector<NetnsProcess> processes_in(const std::vector<std::string>& namespaces) {
  std::map<NsKey, std::string> wanted;
  for (const std::string& ns : namespaces) {
    if (const auto key = key_of(netns_path(ns))) {
      wanted.emplace(*key, ns);
    }
  }
  std::vector<NetnsProcess> out;
  if (wanted.empty()) {
    return out;
  }
  for (const std::string& entry : folder_entries("/proc")) {
    if (!is_number(entry)) {
      continue;
    }
    const auto pid = static_cast<pid_t>(std::stol(entry));
    if (pid == ::getpid()) {
      continue;
    }
    if (auto ns = netns_of(pid, wanted)) {
      out.push_back({pid, *ns, command_of(pid)});
    }
  }
  std::sort(out.begin(), out.end(), [](const NetnsProcess& a, const NetnsProcess& b) { return a.pid < b.pid; });
  return out;
}

std::size_t end_processes_in(const std::vector<std::string>& namespaces, std::chrono::milliseconds grace) {
  std::size_t ended = end_processes(processes_in(namespaces), grace);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (auto left = processes_in(namespaces); !left.empty() && std::chrono::steady_clock::now() < deadline;
       left = processes_in(namespaces)) {
    ended += end_processes(left, std::chrono::milliseconds(50));
  }
  return ended;
}

}  // namespace contend::emulator
