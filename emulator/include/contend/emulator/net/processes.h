#pragma once
// The namespaces contend's runs make on this host, found by name (contend-*), and the processes
// inside them, found by namespace (a thread's /proc/PID/task/TID/ns/net), and ended through
// pidfds: what teardown (teardown.h) and `contend emu status` (leftovers.h) stand on.
// Thread-safe (no shared state).

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace contend::emulator {

struct NetnsProcess {
  pid_t pid = 0;
  std::string netns;    // the contend namespace one of its threads is in
  std::string command;  // its command line, arguments joined by spaces, at most 120 characters
};

// Every namespace whose name starts with "contend-" (in /run/netns), sorted.
std::vector<std::string> contend_namespaces();
// Those of run `run` that exist: its switch contend-<run> and its nodes contend-<run>.*, sorted.
std::vector<std::string> run_namespaces(const std::string& run);

// The processes one of whose threads is in one of `namespaces` (each namespace's device and inode
// against every /proc/PID/task/TID/ns/net), never the calling process; sorted by PID. Namespaces
// that do not exist are skipped.
std::vector<NetnsProcess> processes_in(const std::vector<std::string>& namespaces);
// Ends every process in `namespaces`: SIGTERM to each, SIGKILL after `grace` to those still
// running, then looks again and ends what it finds (a process that forked between the look and
// the signal, one that re-forks under new PIDs) until none is left or 5 s have passed. Signals go
// through pidfds opened after the namespace is checked, so a PID reused meanwhile by another
// process is never signalled. Returns how many ended.
std::size_t end_processes_in(const std::vector<std::string>& namespaces,
                             std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

}  // namespace contend::emulator
