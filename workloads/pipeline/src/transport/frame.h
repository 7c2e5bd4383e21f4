#pragma once
// Private: the TCP transport's wire frame. Every message is a 32-byte header and its payload:
// tensors (kind = Tag::kind), the greeting a connection opens with (kHello), the closing frame
// (kBye) and the closing frame of a rank that failed (kFailed, the payload its reason as text).
// Little-endian, as every host contend runs on. Pure, thread-safe.

#include <cstdint>
#include <string>

#include "contend/pipeline/transport/transport.h"

namespace contend::pipeline::detail {

inline constexpr std::uint32_t kFrameMagic = 0x444E5443;  // "CTND"
inline constexpr std::uint8_t kHello = 2;
inline constexpr std::uint8_t kBye = 3;
inline constexpr std::uint8_t kFailed = 5;  // the sender failed; the payload says why (text)
inline constexpr std::uint8_t kFlagChecksum = 1;
// The most of a failure's reason a closing frame carries.
inline constexpr std::size_t kMaxReasonBytes = 4096;

struct FrameHeader {
  std::uint32_t magic = kFrameMagic;
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  std::uint16_t stage = 0;  // Tag::stage
  std::uint32_t iteration = 0;
  std::uint32_t microbatch = 0;
  std::uint64_t bytes = 0;  // payload
  std::uint32_t checksum = 0;
  std::uint32_t reserved = 0;
};
static_assert(sizeof(FrameHeader) == 32, "frame header is 32 bytes on the wire");

// FNV-1a over `n` bytes: the optional payload checksum.
std::uint32_t fnv1a(const void* data, std::size_t n);

// The header of a tensor frame of `bytes` with `tag`, its checksum set when `checksum`.
FrameHeader tensor_header(const Tag& tag, const float* data, std::uint64_t bytes, bool checksum);
// The tag a tensor frame carries (requires a tensor kind).
Tag tag_of(const FrameHeader& h);
// Whether the header carries a tensor (an activation, a gradient or a control message).
bool is_tensor(const FrameHeader& h);

// The greeting: which rank of how large a world opens the connection, and the run's token
// (TcpOptions::token, in the checksum and reserved words).
FrameHeader hello_header(int rank, int world_size, std::uint64_t token);
std::uint64_t hello_token(const FrameHeader& h);

}  // namespace contend::pipeline::detail
