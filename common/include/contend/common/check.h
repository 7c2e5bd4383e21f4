#pragma once
// CONTEND_CHECK(cond, message): an invariant that only a bug can break. On failure it prints the
// file, line, condition and message to stderr and aborts. Always on, also in release builds.

#include <string>

namespace contend::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);
}  // namespace contend::detail

#define CONTEND_CHECK(cond, message)                                       \
  do {                                                                     \
    if (!(cond)) {                                                         \
      ::contend::detail::check_failed(__FILE__, __LINE__, #cond, message); \
    }                                                                      \
  } while (false)
