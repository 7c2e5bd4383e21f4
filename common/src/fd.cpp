#include "contend/common/fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace contend {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

Result<Fd> Fd::open(const std::string& path, int flags, unsigned mode) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) {
    return errno_error(errno, "open(" + path + ")");
  }
  return Fd(fd);
}

Result<std::pair<Fd, Fd>> Fd::pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return errno_error(errno, "pipe2");
  }
  return std::pair<Fd, Fd>(Fd(fds[0]), Fd(fds[1]));
}

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset() {
  if (fd_ >= 0) {
    if (::close(fd_) != 0 && errno != EINTR) {
      std::fprintf(stderr, "contend: close(%d): %s\n", fd_, std::strerror(errno));
    }
    fd_ = -1;
  }
}

Result<std::string> read_all(const Fd& fd, std::size_t max_bytes) {
  // Read into pieces, joined once at the end: what is read past the limit is never copied (a device
  // that never ends, /dev/zero, is refused after reading the limit once). A file's piece is its
  // size: read in one, returned without a copy.
  struct stat st {};
  const bool sized = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0;
  const std::size_t piece_size =
      std::clamp<std::size_t>(sized ? static_cast<std::size_t>(st.st_size) + 1 : 0, 1u << 20, max_bytes + 1);
  const auto too_big = [max_bytes] {
    return make_error(Errc::kInvalidArgument,
                      "more than " + std::to_string(max_bytes >> 20) + " MiB, the most contend reads from one file");
  };
  std::vector<std::string> pieces;  // each piece_size long; the last holds `used` bytes read
  std::size_t used = piece_size;
  std::size_t total = 0;
  for (;;) {
    if (used == piece_size) {
      if (total > max_bytes) {
        return too_big();
      }
      pieces.emplace_back(piece_size, '\0');
      used = 0;
    }
    const ssize_t n = ::read(fd.get(), pieces.back().data() + used, piece_size - used);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return errno_error(errno, "read");
    }
    if (n == 0) {
      break;
    }
    used += static_cast<std::size_t>(n);
    total += static_cast<std::size_t>(n);
  }
  pieces.back().resize(used);
  if (total > max_bytes) {
    return too_big();
  }
  if (pieces.size() == 1) {
    return std::move(pieces.front());
  }
  std::string out;
  out.reserve(total);
  for (const std::string& piece : pieces) {
    out += piece;
  }
  return out;
}

Result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  auto fd = Fd::open(path, O_RDONLY);
  if (!fd) {
    return fd.error();
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return make_error(Errc::kInvalidArgument, path + ": a folder, not a file");
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {  // /dev/zero would be read to the limit first
    return make_error(Errc::kInvalidArgument, path + ": a device, not a file");
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return make_error(Errc::kInvalidArgument, path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                                                  std::to_string(max_bytes >> 20) + " MiB contend reads from one file");
  }
  auto text = read_all(*fd, max_bytes);
  if (!text) {
    return with_context(text.error(), path);
  }
  return text;
}

Result<void> write_file_atomic(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    auto fd = Fd::open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW);
    if (!fd) {
      return fd.error();
    }
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd->get(), text.data() + done, text.size() - done);
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        const Error err = errno_error(errno, "write(" + tmp + ")");
        ::unlink(tmp.c_str());
        return err;
      }
      done += static_cast<size_t>(n);
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const Error err = errno_error(errno, "rename(" + tmp + ", " + path + ")");
    ::unlink(tmp.c_str());
    return err;
  }
  return {};
}

}  // namespace contend

namespace contend {

std::string file_tail(const std::string& path, std::size_t max_bytes) {
  auto text = read_file(path);
  if (!text) {
    return "";
  }
  std::string t = text->size() > max_bytes ? "..." + text->substr(text->size() - max_bytes) : *text;
  while (!t.empty() && t.back() == '\n') {
    t.pop_back();
  }
  return t;
}

std::vector<std::string> folder_entries(const std::string& dir) {
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

}  // namespace contend
