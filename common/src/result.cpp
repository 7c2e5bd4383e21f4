#include "contend/common/result.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace contend {

namespace detail {
void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "contend: internal error at %s:%d: CHECK(%s) failed: %s\n", file, line, condition,
               message.c_str());
  std::abort();
}
}  // namespace detail

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
      return "invalid-argument";
    case Errc::kParse:
      return "parse";
    case Errc::kNotFound:
      return "not-found";
    case Errc::kPermission:
      return "permission";
    case Errc::kUnsupported:
      return "unsupported";
    case Errc::kIo:
      return "io";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kDeadlock:
      return "deadlock";
    case Errc::kInternal:
      return "internal";
  }
  return "unknown";
}

Error errno_error(int err, const std::string& what) {
  Errc code = Errc::kIo;
  switch (err) {
    case EPERM:
    case EACCES:
      code = Errc::kPermission;
      break;
    case ENOENT:
    case ENODEV:
    case ESRCH:
      code = Errc::kNotFound;
      break;
    case ETIMEDOUT:
      code = Errc::kTimeout;
      break;
    case EOPNOTSUPP:
    case ENOSYS:
      code = Errc::kUnsupported;
      break;
    case EINVAL:
      code = Errc::kInvalidArgument;
      break;
    default:
      break;
  }
  return Error{code, what + ": " + std::strerror(err), err};
}

std::string excerpt(std::string_view value) {
  constexpr std::size_t kMost = 60;
  if (value.size() <= kMost) {
    return std::string(value);
  }
  std::size_t cut = kMost;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) {
    --cut;  // not inside a character
  }
  return std::string(value.substr(0, cut)) + "... (" + std::to_string(value.size()) + " bytes)";
}

Error with_context(Error error, const std::string& context) {
  error.message = context + ": " + error.message;
  return error;
}

}  // namespace contend
