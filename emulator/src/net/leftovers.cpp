#include "contend/emulator/net/leftovers.h"

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

// The entries of a folder (without . and ..); empty when it cannot be read.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return out;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") {
      out.push_back(name);
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The namespace among `wanted` that one of `pid`'s threads is in, if any.
std::optional<std::string> netns_of(pid_t pid, const std::map<NsKey, std::string>& wanted) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  for (const std::string& tid : entries(task)) {
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

// The state folder's files that a writer killed half-way left: <run>.json.new.<pid> and
// write_file_atomic's <name>.tmp.<pid>.<n>.
std::vector<std::string> stale_state_files() {
  std::vector<std::string> out;
  for (const std::string& name : entries(state_dir())) {
    if (name.find(".json.new.") != std::string::npos || name.find(".json.tmp.") != std::string::npos) {
      out.push_back(state_dir() + "/" + name);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> contend_namespaces() {
  std::vector<std::string> out;
  for (const std::string& name : entries("/run/netns")) {
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
  for (const std::string& entry : entries("/proc")) {
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

RunSurvey survey_run(const std::string& run) {
  RunSurvey s;
  s.run = run;
  s.namespaces = run_namespaces(run);
  auto state = read_run_state(run);
  s.recorded = !state || state->has_value();
  if (!state) {
    s.problem = "its state file is damaged: " + state.error().message;
  } else if (*state) {
    s.state = **state;
    auto scenario = load_scenario(s.state->scenario);
    if (scenario) {
      s.scenario = std::move(*scenario);
    } else {
      s.problem = "its scenario cannot be read: " + scenario.error().message;
    }
  }
  s.processes = processes_in(s.namespaces);
  return s;
}

std::vector<RunSurvey> survey_runs() {
  std::vector<RunSurvey> out;
  std::set<std::string> seen;
  for (const std::string& run : list_runs()) {
    out.push_back(survey_run(run));
    seen.insert(run);
  }
  for (const std::string& ns : contend_namespaces()) {
    const std::string run = *netns_run(ns);
    if (seen.insert(run).second) {
      out.push_back(survey_run(run));
    }
  }
  return out;
}

Result<CleanupReport> tear_down_all() {
  CleanupReport report;
  Result<void> first;
  const auto note = [&first](const Result<void>& r) { first = first.ok() ? r : first; };
  // Processes first, all at once: each would keep its namespace alive after its name is gone.
  report.processes = end_processes(processes_in(contend_namespaces()));
  for (const std::string& run : list_runs()) {
    auto torn = tear_down_run(run);
    if (!torn) {
      note(torn.error());
      continue;
    }
    report.runs++;
    report.namespaces += torn->namespaces;
    report.processes += torn->processes;
  }
  auto removed = remove_namespaces(contend_namespaces());
  if (!removed) {
    note(removed.error());
  } else {
    report.namespaces += *removed;
  }
  for (const std::string& path : stale_state_files()) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      note(errno_error(errno, "unlink " + path));
    }
  }
  if (!first) {
    return first.error();
  }
  return report;
}

}  // namespace contend::emulator
