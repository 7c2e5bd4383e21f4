#include "real/cell_wait.h"

#include <signal.h>

#include <thread>
#include <utility>

#include "contend/common/fd.h"

namespace contend::runner {

namespace {

// "the log PATH ends:\n..." or, when it is empty (a process killed at once), says so.
std::string log_ending(const std::string& log) {
  const std::string tail = file_tail(log, 900);
  return tail.empty() ? "the log " + log + " is empty (nothing was written to it before this)"
                      : "the log " + log + " ends:\n" + tail;
}

// "2 (n2), 3" style list of the processes still running.
std::string still_running(const std::vector<ChildProcess>& processes, const CellProcesses& names) {
  std::string out;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    if (processes[i].running()) {
      out += (out.empty() ? "" : ", ") + std::to_string(i);
    }
  }
  return names.what + (out.find(',') == std::string::npos ? " " : "s ") + out + " still running";
}

// Process `found` failed with `code`: the one whose log says it failed first, with its code, where
// the logs say (its guard may still be ending what its command left); else `found`.
std::pair<std::size_t, int> first_to_fail(const CellProcesses& names, std::size_t found, int code) {
  if (names.first_failed) {
    if (auto first = names.first_failed()) {
      return *first;
    }
  }
  return {found, code};
}

}  // namespace

std::string failed_first(const CellProcesses& names, std::size_t index, int code, const std::string& by) {
  return names.what + " " + std::to_string(index) + " " + ending(code) + " (the first to fail" + by + "); " +
         log_ending(names.log(index));
}

Result<void> wait_processes(std::vector<ChildProcess>& processes, const CellProcesses& names,
                            std::chrono::seconds timeout, const std::atomic<bool>& stop,
                            const std::function<std::optional<Error>()>& invalid) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int running = 0;
    for (std::size_t i = 0; i < processes.size(); ++i) {
      if (!processes[i].running()) {
        continue;
      }
      auto code = processes[i].wait(std::chrono::milliseconds(0));
      if (!code) {
        ++running;
      } else if (*code != 0) {
        const auto [first, first_code] = first_to_fail(names, i, *code);
        return make_error(Errc::kIo, failed_first(names, first, first_code));
      }
    }
    if (running == 0) {
      return {};
    }
    if (stop.load()) {
      return make_error(Errc::kIo, "stopped");
    }
    if (invalid) {
      if (auto why = invalid()) {
        return with_context(*why, "the scenario player (the cell is not measured)");
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return make_error(Errc::kTimeout, "the cell took longer than " + std::to_string(timeout.count()) + " s (" +
                                            still_running(processes, names) + "); see " + names.log(0));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void end_all(std::vector<ChildProcess>& processes) {
  for (const ChildProcess& p : processes) {
    if (p.running()) {
      ::kill(p.pid(), SIGTERM);
    }
  }
  for (ChildProcess& p : processes) {
    p.terminate();
  }
}

}  // namespace contend::runner
