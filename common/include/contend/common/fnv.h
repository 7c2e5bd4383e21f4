#pragma once
// FNV-1a, 64 bits: a fingerprint of bytes (not a cryptographic hash), the same on every build and
// machine, for telling texts apart (the files a resumed run began with; NCCL's host ids). Pure.

#include <cstdint>
#include <string_view>

namespace contend {

inline constexpr std::uint64_t kFnv1aStart = 14695981039346656037ull;

// `h` continues an earlier fingerprint, so that several texts make one.
constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnv1aStart) {
  for (const char c : bytes) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return h;
}

}  // namespace contend
