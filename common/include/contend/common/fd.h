#pragma once
// Fd: the one owner of a file descriptor. Move-only; closes on destruction (errors from close are
// logged, never thrown). Not thread-safe: one owner, one thread at a time.

#include <cstddef>
#include <string>
#include <vector>

#include "contend/common/result.h"

namespace contend {

class Fd {
 public:
  Fd() = default;
  // Takes ownership of `fd` (which may be -1 for "none").
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  // Opens `path` with `flags` | O_CLOEXEC. Fails with errno_error ("open(<path>): ...").
  static Result<Fd> open(const std::string& path, int flags, unsigned mode = 0644);
  // A pipe, both ends O_CLOEXEC: {read end, write end}.
  static Result<std::pair<Fd, Fd>> pipe();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership and returns the descriptor.
  int release();
  // Closes the descriptor now, if any.
  void reset();

 private:
  int fd_ = -1;
};

// The most any of contend's input files may hold (scenarios, traces, experiments, jobs, logs read
// back): larger ones are refused before they are read into memory.
inline constexpr std::size_t kMaxFileBytes = 64u << 20;
// Reads everything from `fd` until end of file, at most `max_bytes` (kInvalidArgument beyond).
Result<std::string> read_all(const Fd& fd, std::size_t max_bytes = kMaxFileBytes);
// Reads a whole file of at most `max_bytes`. Errors name the path; kInvalidArgument saying the
// limit when the file is larger (a pipe that never ends is read only up to the limit); a folder
// or a device (/dev/zero) is refused without reading.
Result<std::string> read_file(const std::string& path, std::size_t max_bytes = kMaxFileBytes);
// The last `max_bytes` of a text file (a log), prefixed "..." when cut, trailing newlines
// dropped; "" when it cannot be read. For error messages that quote a log.
std::string file_tail(const std::string& path, std::size_t max_bytes);
// Writes `text` to `path` through a temporary file in the same folder (created exclusively, never
// through a link) and rename(), so readers never see half a file and a planted link is replaced,
// not followed. Errors name the path.
Result<void> write_file_atomic(const std::string& path, const std::string& text);

// The names in folder `dir` but "." and "..", sorted; empty when it cannot be read.
std::vector<std::string> folder_entries(const std::string& dir);

}  // namespace contend
