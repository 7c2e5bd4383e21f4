#pragma once
// Fd: the one owner of a file descriptor. Move-only; closes on destruction (errors from close are
// logged, never thrown). Not thread-safe: one owner, one thread at a time.

#include <string>

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

// Reads everything from `fd` until end of file.
Result<std::string> read_all(const Fd& fd);
// Reads a whole file. Errors name the path.
Result<std::string> read_file(const std::string& path);
// The last `max_bytes` of a text file (a log), prefixed "..." when cut, trailing newlines
// dropped; "" when it cannot be read. For error messages that quote a log.
std::string file_tail(const std::string& path, std::size_t max_bytes);
// Writes `text` to `path` through a temporary file in the same folder and rename(), so readers
// never see half a file. Errors name the path.
Result<void> write_file_atomic(const std::string& path, const std::string& text);

}  // namespace contend
