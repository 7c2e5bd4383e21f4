#include "contend/runner/job/rank_guard.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/process_tree.h"
#include "job/job_log.h"
#include "job/memory_attach.h"

namespace contend::runner {
namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The command's failure with `code`, now.
CommandFailure failed_now(int code) {
  return {code, steady_now(),
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()};
}

// One stream of the command: its pipe's read end and the line it has begun.
struct Stream {
  Fd fd;
  LogStream stream = LogStream::kOut;
  std::string partial;
};

// Appends whole lines (and runaway pieces of kMaxLogLine) to the log, each stamped `read_s`, when
// the read that completed it returned (one stamp for a read: its lines were in the pipe together);
// keeps the rest.
void emit_lines(Stream& s, const Fd& log, bool flush_partial, double read_s) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    out += log_line(read_s, s.stream, std::string_view(s.partial).substr(start, nl - start));
  }
  s.partial.erase(0, start);
  while (s.partial.size() >= kMaxLogLine || (flush_partial && !s.partial.empty())) {
    const std::size_t n = std::min(s.partial.size(), kMaxLogLine);
    out += log_line(read_s, s.stream, std::string_view(s.partial).substr(0, n));
    s.partial.erase(0, n);
  }
  if (!out.empty() && ::write(log.get(), out.data(), out.size()) < 0) {
    std::perror("contend job-rank: write to the rank log");
  }
}

// Reads what the streams have within `timeout_ms` (-1: no limit), or until `ended` (the command's
// pidfd, when valid) says the command ended or a signal arrives; a stream at its end is closed.
// `sigmask`: the signal mask while waiting (ppoll), null for the current one.
void pump(std::vector<Stream>& streams, const Fd& log, int timeout_ms, const Fd& ended = Fd(),
          const sigset_t* sigmask = nullptr) {
  std::vector<pollfd> fds;
  for (const Stream& s : streams) {
    fds.push_back({s.fd.get(), s.fd.valid() ? short(POLLIN) : short(0), 0});
  }
  if (ended.valid()) {
    fds.push_back({ended.get(), POLLIN, 0});
  }
  timespec limit{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  if (::ppoll(fds.data(), fds.size(), timeout_ms < 0 ? nullptr : &limit, sigmask) <= 0) {
    return;
  }
  char buf[16384];
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (!streams[i].fd.valid() || fds[i].revents == 0) {
      continue;
    }
    const ssize_t n = ::read(streams[i].fd.get(), buf, sizeof buf);
    const double read_s = steady_now();
    if (n > 0) {
      streams[i].partial.append(buf, static_cast<std::size_t>(n));
      emit_lines(streams[i], log, false, read_s);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      emit_lines(streams[i], log, true, read_s);
      streams[i].fd.reset();
    }
  }
}

bool open_streams(const std::vector<Stream>& streams) {
  return std::any_of(streams.begin(), streams.end(), [](const Stream& s) { return s.fd.valid(); });
}

// After the command or the guard's stop: the tree ended, then what is left in the pipes read
// (a second's worth at most: a process outside the tree may hold a pipe open).
void finish(std::vector<Stream>& streams, const Fd& log, std::chrono::milliseconds grace) {
  end_descendants(::getpid(), grace);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (open_streams(streams) && std::chrono::steady_clock::now() < deadline) {
    pump(streams, log, 50);
  }
  for (Stream& s : streams) {
    emit_lines(s, log, true, steady_now());
  }
}

// Blocks the stop signals (SIGINT, SIGTERM), the mask it had in `before`; returns that mask
// without them, to wait with.
sigset_t block_stop_signals(sigset_t& before) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &before);
  sigset_t waiting = before;
  sigdelset(&waiting, SIGINT);
  sigdelset(&waiting, SIGTERM);
  return waiting;
}

// Logs the command's output until it ends (its code; a failure also logged at once, failure_line)
// or `stop` is set (nullopt). The guard wakes only for the command's output, its end (a pidfd)
// and the stop signals: a job's CPU is not the guard's to take. The stop signals are blocked but
// while it waits (ppoll), so one that comes after `stop` was read still ends the wait. Without a
// pidfd (a kernel before 5.3) it looks for the command's end every 50 ms.
std::optional<int> watch(ChildProcess& child, std::vector<Stream>& streams, const Fd& log,
                         const std::atomic<bool>& stop) {
  const Fd exited(static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0)));
  sigset_t before;
  const sigset_t waiting = block_stop_signals(before);
  std::optional<int> out;
  while (!out && !stop.load()) {
    pump(streams, log, exited.valid() ? -1 : 50, exited, &waiting);
    if (auto code = child.wait(std::chrono::milliseconds(0))) {
      out = *code;
    }
  }
  if (out && *out != 0) {
    const std::string line = failure_line(failed_now(*out));
    (void)!::write(log.get(), line.data(), line.size());
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return out;
}

}  // namespace

int run_rank_guard(const RankGuardOptions& o, const std::atomic<bool>& stop) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  auto log = Fd::open(o.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  auto out = Fd::pipe();
  auto err = Fd::pipe();
  if (!log || !out || !err) {
    const Error& e = !log ? log.error() : !out ? out.error() : err.error();
    std::fprintf(stderr, "contend job-rank: %s\n", e.message.c_str());
    return 127;
  }
  if (auto closed = deny_cross_memory_attach(); !closed) {  // the job's tree copies no rank's memory
    const std::string line = log_line(steady_now(), LogStream::kGuard,
                                      "contend job-rank: cross-memory attach left open: " + closed.error().message);
    (void)!::write(log->get(), line.data(), line.size());
  }
  ChildOptions co;
  co.stdout_fd = out->second.get();
  co.stderr_fd = err->second.get();
  co.working_dir = o.working_dir;
  co.grace = o.grace;
  co.own_group = true;  // the rank's `kill 0` ends its own tree, not its guard
  auto child = ChildProcess::spawn(o.command, co);
  out->second.reset();
  err->second.reset();
  if (!child) {
    const std::string line = log_line(steady_now(), LogStream::kGuard, "contend job-rank: " + child.error().message) +
                             failure_line(failed_now(127));
    (void)!::write(log->get(), line.data(), line.size());
    std::fprintf(stderr, "contend job-rank: %s\n", child.error().message.c_str());
    return 127;
  }
  std::vector<Stream> streams;
  streams.push_back({std::move(out->first), LogStream::kOut, {}});
  streams.push_back({std::move(err->first), LogStream::kErr, {}});
  const auto ended = watch(*child, streams, *log, stop);
  finish(streams, *log, o.grace);
  // Stopped, finish reaped the command with the rest of the tree: forget its pid, so that nothing
  // signals it again when `child` goes (the pid may be another process's by then).
  (void)child->wait(std::chrono::milliseconds(0));
  return ended.value_or(130);
}

}  // namespace contend::runner
