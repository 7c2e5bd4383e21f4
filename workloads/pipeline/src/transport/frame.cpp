#include "transport/frame.h"

namespace contend::pipeline::detail {

std::uint32_t fnv1a(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ p[i]) * 16777619u;
  }
  return h;
}

FrameHeader tensor_header(const Tag& tag, const float* data, std::uint64_t bytes, bool checksum) {
  FrameHeader h;
  h.kind = static_cast<std::uint8_t>(tag.kind);
  h.iteration = static_cast<std::uint32_t>(tag.iteration);
  h.microbatch = static_cast<std::uint32_t>(tag.microbatch);
  h.stage = static_cast<std::uint16_t>(tag.stage);
  h.bytes = bytes;
  if (checksum) {
    h.flags = kFlagChecksum;
    h.checksum = fnv1a(data, bytes);
  }
  return h;
}

Tag tag_of(const FrameHeader& h) {
  return Tag{static_cast<Kind>(h.kind), static_cast<int>(h.iteration), static_cast<int>(h.microbatch), h.stage};
}

bool is_tensor(const FrameHeader& h) {
  return h.kind == static_cast<std::uint8_t>(Kind::kActivation) ||
         h.kind == static_cast<std::uint8_t>(Kind::kGradient) || h.kind == static_cast<std::uint8_t>(Kind::kControl);
}

FrameHeader hello_header(int rank, int world_size, std::uint64_t token) {
  FrameHeader h;
  h.kind = kHello;
  h.iteration = static_cast<std::uint32_t>(rank);
  h.microbatch = static_cast<std::uint32_t>(world_size);
  h.checksum = static_cast<std::uint32_t>(token);
  h.reserved = static_cast<std::uint32_t>(token >> 32);
  return h;
}

std::uint64_t hello_token(const FrameHeader& h) {
  return (static_cast<std::uint64_t>(h.reserved) << 32) | h.checksum;
}

}  // namespace contend::pipeline::detail
