#include "contend/common/process_tree.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "contend/common/fd.h"

namespace contend {
namespace {

// Every process's parent, from /proc/PID/stat (the field after the command's closing ')').
std::multimap<pid_t, pid_t> children_by_parent() {
  std::multimap<pid_t, pid_t> out;
  for (const std::string& name : folder_entries("/proc")) {
    char* end = nullptr;
    const long pid = std::strtol(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0') {
      continue;
    }
    std::ifstream stat("/proc/" + name + "/stat");
    std::string text;
    std::getline(stat, text);
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos || close + 4 > text.size()) {
      continue;  // gone while we looked
    }
    // ") S PPID ...": the state, then the parent.
    const long parent = std::strtol(text.c_str() + close + 4, nullptr, 10);
    out.emplace(static_cast<pid_t>(parent), static_cast<pid_t>(pid));
  }
  return out;
}

int signal_all(pid_t root, int signal) {
  const auto pids = descendants(root);
  for (const pid_t pid : pids) {
    ::kill(pid, signal);
  }
  return static_cast<int>(pids.size());
}

}  // namespace

std::vector<pid_t> descendants(pid_t root) {
  const auto children = children_by_parent();
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      if (std::find(out.begin(), out.end(), it->second) == out.end()) {
        out.push_back(it->second);
        todo.push_back(it->second);
      }
    }
  }
  return out;
}

void reap_ended_children() {
  for (const pid_t pid : descendants(::getpid())) {
    int status = 0;
    ::waitpid(pid, &status, WNOHANG);  // not a child of ours (a grandchild): ECHILD, nothing done
  }
}

int end_descendants(pid_t root, std::chrono::milliseconds grace) {
  int signalled = signal_all(root, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (root == ::getpid()) {
      reap_ended_children();
    }
    if (descendants(root).empty()) {
      return signalled;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // SIGKILL until nothing is left: a process that forked between the walk and the signal (one
  // that re-forks under new PIDs) is found by the next walk.
  const auto last = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  do {
    signalled += signal_all(root, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (root == ::getpid()) {
      reap_ended_children();
    }
  } while (!descendants(root).empty() && std::chrono::steady_clock::now() < last);
  return signalled;
}

}  // namespace contend
