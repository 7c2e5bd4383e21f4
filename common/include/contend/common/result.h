#pragma once
// Result<T>: the value of an operation that can fail in an expected way (bad input, missing file,
// no permission), or the Error that says why. C++20 has no std::expected; this is the small subset
// the project needs. Bugs are not Results: they are CONTEND_CHECK failures that abort.
// Thread-safety: a Result is a plain value; distinct objects may be used from distinct threads.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "contend/common/check.h"

namespace contend {

// What kind of failure; callers branch on this, people read Error::message.
enum class Errc {
  kInvalidArgument,  // the caller's input is malformed (bad unit, bad option value)
  kParse,            // a file or string does not follow its format
  kNotFound,         // a file, interface, namespace or peer does not exist
  kPermission,       // missing privilege (CAP_NET_ADMIN, root)
  kUnsupported,      // the kernel, build or machine lacks a feature (netem, CUDA)
  kIo,               // the OS refused an I/O operation
  kTimeout,          // a deadline passed
  kDeadlock,         // a schedule or simulation can make no progress
  kInternal,         // a third-party library failed in an unexpected way
};

// Short lowercase name of `code`, e.g. "invalid-argument".
const char* errc_name(Errc code);

struct Error {
  Errc code = Errc::kInternal;
  std::string message;  // says what was attempted and what went wrong, quoting the input
  int os_errno = 0;     // the errno behind it (errno_error), for callers that retry; 0 otherwise
};

// A value a user gave, as an error message quotes it: at most 60 characters, then "...", so a
// megabyte of input does not become a megabyte of message.
std::string excerpt(std::string_view value);

// Convenience: Error{code, message}.
inline Error make_error(Errc code, std::string message) {
  return Error{code, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Requires ok(); aborts otherwise (a bug in the caller).
  T& value() & {
    CONTEND_CHECK(ok(), "Result::value() on an error: " + std::get<1>(state_).message);
    return std::get<0>(state_);
  }
  const T& value() const& {
    CONTEND_CHECK(ok(), "Result::value() on an error: " + std::get<1>(state_).message);
    return std::get<0>(state_);
  }
  T&& value() && {
    CONTEND_CHECK(ok(), "Result::value() on an error: " + std::get<1>(state_).message);
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Requires !ok().
  const Error& error() const {
    CONTEND_CHECK(!ok(), "Result::error() on a value");
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Result of an operation with nothing to return.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    CONTEND_CHECK(!ok_, "Result::error() on success");
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

// Error from an errno value: message "<what>: <strerror(err)>", code mapped from err (EPERM and
// EACCES -> kPermission, ENOENT/ENODEV/ESRCH -> kNotFound, ETIMEDOUT -> kTimeout,
// EOPNOTSUPP/ENOSYS -> kUnsupported, EINVAL -> kInvalidArgument, anything else -> kIo).
// The one place errno is mapped; `err` is kept in Error::os_errno.
Error errno_error(int err, const std::string& what);

// Prepends `context + ": "` to the message, keeping the code.
Error with_context(Error error, const std::string& context);

// The error of the first failed Result among `results`, in order; nullopt when all succeeded.
// For parsers that read several fields and report the first bad one:
//   if (auto e = first_error(name, rate, delay)) { return *e; }
template <typename... Results>
std::optional<Error> first_error(const Results&... results) {
  std::optional<Error> out;
  ((out || results.ok() ? void() : void(out = results.error())), ...);
  return out;
}

}  // namespace contend
