#pragma once
// ChildProcess: one started program, owned until it is reaped. Move-only. The destructor ends a
// child that is still running (SIGTERM, then SIGKILL after a grace period) and reaps it, so no
// process outlives its owner. Only the child's own PID is ever signalled, or with own_group the
// group it leads. A child starts with no signal blocked, whatever its spawner blocks.
// Not thread-safe: one owner thread.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"

namespace contend {

struct ChildOptions {
  // Signal sent by terminate() and the destructor before SIGKILL.
  int stop_signal = 15;  // SIGTERM
  // How long terminate() waits after stop_signal before SIGKILL.
  std::chrono::milliseconds grace{2000};
  // When set, the child's stdout and stderr are appended to this file (created 0644; never
  // through a symbolic link: the spawn fails with ELOOP).
  std::string output_path;
  // The child gets SIGTERM when the thread that spawned it ends, also when its owner is killed
  // with SIGKILL or aborts before any destructor runs (Linux's parent-death signal, kept across
  // exec): no worker outlives the runner that started it. A child whose parent is already gone
  // when it starts exits at once.
  bool die_with_parent = true;
  // "NAME=VALUE" entries the child gets on top of this process's environment (replacing a
  // variable of the same name): what it must not see on its command line, such as a run's token.
  std::vector<std::string> environment;
  // When >= 0 and output_path is empty, the child's stdout (stderr) is this descriptor, duplicated
  // in the child; the caller keeps its own (a pipe's write end it reads the child's lines from).
  int stdout_fd = -1;
  int stderr_fd = -1;
  // When set, the child leads a process group of its own (setpgid in the child and the parent,
  // before exec): a signal it sends to its group (`kill 0`, a launcher's `trap 'kill 0' EXIT`)
  // stays inside it instead of reaching its spawner, and terminate() signals the whole group. Its
  // stdin is /dev/null (a background group that read the terminal would be stopped).
  bool own_group = false;
  // When set, the child starts in this folder (the spawn fails naming the program and the errno
  // when it cannot).
  std::string working_dir{};
};

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (searched in PATH) with argv. Fails with kNotFound when the program does not
  // exist, kPermission when it is not executable; the error names the program. Requires a
  // non-empty argv. With die_with_parent, the calling thread must outlive the child (spawn from
  // the thread that owns it, as the runner's main thread does).
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv, ChildOptions options = {});

  pid_t pid() const { return pid_; }
  // True until the child has been reaped.
  bool running() const { return pid_ > 0; }

  // Waits up to `timeout` for the child to exit and reaps it. Returns the exit code (128+signal
  // when killed by a signal); kTimeout when it is still running afterwards.
  Result<int> wait(std::chrono::milliseconds timeout);
  // Sends stop_signal, waits the grace period, then SIGKILL; reaps. Returns the exit code as
  // wait() does. A no-op returning the stored code when already reaped.
  int terminate();

 private:
  explicit ChildProcess(pid_t pid, ChildOptions options) : pid_(pid), options_(options) {}
  std::optional<int> try_reap();

  pid_t pid_ = -1;
  int exit_code_ = -1;
  ChildOptions options_;
};

// How a child ended, for people, from wait()'s code: "exited with 1", "was killed by signal 9".
std::string ending(int code);

}  // namespace contend
