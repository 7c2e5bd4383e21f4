#include "contend/common/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

extern char** environ;

namespace contend {
namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return -1;
}

}  // namespace

ChildProcess::~ChildProcess() {
  if (running()) {
    terminate();
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), exit_code_(other.exit_code_), options_(other.options_) {
  other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (running()) {
      terminate();
    }
    pid_ = other.pid_;
    exit_code_ = other.exit_code_;
    options_ = other.options_;
    other.pid_ = -1;
  }
  return *this;
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, ChildOptions options) {
  CONTEND_CHECK(!argv.empty(), "ChildProcess::spawn needs a program");
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  if (!options.output_path.empty()) {
    ::posix_spawn_file_actions_addopen(&actions, 1, options.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  // posix_spawnp reports exec failures (ENOENT, EACCES) through its return value on glibc.
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return errno_error(rc, "spawn " + argv[0]);
  }
  return ChildProcess(pid, options);
}

std::optional<int> ChildProcess::try_reap() {
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = exit_code_of(status);
    pid_ = -1;
    return exit_code_;
  }
  if (r < 0 && errno == ECHILD) {
    // Someone else reaped it; nothing left to own.
    pid_ = -1;
    return exit_code_;
  }
  return std::nullopt;
}

Result<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (!running()) {
    return exit_code_;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    if (auto code = try_reap()) {
      return *code;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return make_error(Errc::kTimeout, "pid " + std::to_string(pid_) + " still running after " +
                                            std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

int ChildProcess::terminate() {
  if (!running()) {
    return exit_code_;
  }
  ::kill(pid_, options_.stop_signal);
  auto waited = wait(options_.grace);
  if (waited) {
    return *waited;
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_) {
    exit_code_ = exit_code_of(status);
  } else {
    std::fprintf(stderr, "contend: could not reap pid %d\n", static_cast<int>(pid_));
  }
  pid_ = -1;
  return exit_code_;
}

}  // namespace contend
