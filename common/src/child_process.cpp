#include "contend/common/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "contend/common/fd.h"

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

namespace {

// The program's path: argv0 itself when it has a '/', else the first executable match on PATH.
Result<std::string> resolve(const std::string& argv0) {
  if (argv0.find('/') != std::string::npos) {
    return argv0;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  int first_error = ENOENT;
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = (end > start ? dirs.substr(start, end - start) : ".") + "/" + argv0;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (errno == EACCES) {
      first_error = EACCES;
    }
    start = end + 1;
  }
  return errno_error(first_error, "spawn " + argv0);
}

// In the child, between fork and exec: only async-signal-safe calls. Reports a failure through
// `report` (the errno) and exits 127.
[[noreturn]] void fail_child(int report) {
  const int err = errno;
  (void)!::write(report, &err, sizeof err);
  ::_exit(127);
}

[[noreturn]] void exec_child(const std::string& program, char* const* args, char* const* env, const ChildOptions& o,
                             pid_t parent, int report) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the spawner's blocked signals are its own
  if (o.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) {
      ::_exit(127);  // the parent died before the signal was armed
    }
  }
  if (o.own_group) {
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (::setpgid(0, 0) != 0 || null < 0 || ::dup2(null, 0) < 0) {
      fail_child(report);
    }
  }
  if (!o.output_path.empty()) {
    const int fd = ::open(o.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) {
      fail_child(report);
    }
  } else if ((o.stdout_fd >= 0 && ::dup2(o.stdout_fd, 1) < 0) || (o.stderr_fd >= 0 && ::dup2(o.stderr_fd, 2) < 0)) {
    fail_child(report);
  }
  if (!o.working_dir.empty() && ::chdir(o.working_dir.c_str()) != 0) {
    fail_child(report);
  }
  ::execve(program.c_str(), args, env);
  fail_child(report);
}

}  // namespace

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, ChildOptions options) {
  CONTEND_CHECK(!argv.empty(), "ChildProcess::spawn needs a program");
  auto program = resolve(argv[0]);
  if (!program) {
    return program.error();
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  // The environment, made before the fork (the child may only make async-signal-safe calls).
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced =
        std::any_of(options.environment.begin(), options.environment.end(), [&](const std::string& x) {
          return entry.substr(0, entry.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
        });
    if (!replaced) {
      env.push_back(*e);
    }
  }
  for (const auto& x : options.environment) {
    env.push_back(const_cast<char*>(x.c_str()));
  }
  env.push_back(nullptr);
  // The exec's errno comes back through a close-on-exec pipe: nothing read means it ran.
  auto pipe = Fd::pipe();
  if (!pipe) {
    return pipe.error();
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return errno_error(errno, "fork for " + argv[0]);
  }
  if (pid == 0) {
    exec_child(*program, args.data(), env.data(), options, parent, pipe->second.get());
  }
  if (options.own_group) {
    (void)::setpgid(pid, pid);  // also here, so that it holds before spawn returns (EACCES after exec: done)
  }
  pipe->second.reset();
  int err = 0;
  ssize_t n = 0;
  do {
    n = ::read(pipe->first.get(), &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return errno_error(err, "spawn " + argv[0] + (options.output_path.empty() ? "" : " > " + options.output_path) +
                                (options.working_dir.empty() ? "" : " in " + options.working_dir));
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
  const pid_t target = options_.own_group ? -pid_ : pid_;  // unreaped, the group's id is still its own
  ::kill(target, options_.stop_signal);
  auto waited = wait(options_.grace);
  if (waited) {
    return *waited;
  }
  ::kill(target, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_) {
    exit_code_ = exit_code_of(status);
  } else {
    std::fprintf(stderr, "contend: could not reap pid %d\n", static_cast<int>(pid_));
  }
  pid_ = -1;
  return exit_code_;
}

std::string ending(int code) {
  return code > 128 ? "was killed by signal " + std::to_string(code - 128) : "exited with " + std::to_string(code);
}

}  // namespace contend
