#pragma once
// Pacing of the UDP flow source (pure: no clock, no I/O; flow_udp.cpp sends what it decides). A
// UDP source sends batches of datagrams, one sendmmsg each, as UDP GSO buffers where the kernel
// takes them; a token bucket releases a batch when it holds the batch's bytes, so the source's
// syscalls and wake-ups do not grow with the rate while its rate stays exact: the bucket loses
// tokens only when the source falls behind by more than its depth (kBucketDepth of the rate).

#include <cstddef>
#include <cstdint>

namespace contend::emulator {

// The time a batch covers at the flow's rate: the source wakes about this often below its ceiling.
inline constexpr double kBatchInterval_s = 500e-6;
// The bucket's depth in time at the rate: how late a wake-up may be before tokens are lost.
inline constexpr double kBucketDepth_s = 20e-3;
// UDP GSO: datagrams per buffer at most (the kernel's UDP_MAX_SEGMENTS is 64 before 6.9, 128
// since) and payload bytes per buffer at most (one IPv4 datagram's worth).
inline constexpr std::size_t kMaxGsoSegments = 64;
inline constexpr std::size_t kMaxGsoBytes = 65000;
// Messages per sendmmsg at most: GSO buffers, or single datagrams without GSO.
inline constexpr std::size_t kMaxGsoBuffers = 8;
inline constexpr std::size_t kMaxDatagramsPerCall = 64;

// How a UDP source's batches are cut.
struct UdpBatchPlan {
  std::size_t datagram_bytes = 1472;  // UDP payload per datagram
  std::size_t segments = 1;           // datagrams per buffer (UDP_SEGMENT's gso_size = datagram_bytes); 1 without GSO
  std::size_t max_buffers = 1;        // buffers per sendmmsg at most
  std::size_t batch_datagrams = 1;    // datagrams one batch sends at the flow's rate

  std::uint64_t batch_bytes() const { return static_cast<std::uint64_t>(batch_datagrams) * datagram_bytes; }
  // Buffers (sendmmsg messages) that `datagrams` take: full buffers and one partial.
  std::size_t buffers_for(std::size_t datagrams) const { return (datagrams + segments - 1) / segments; }
};

// The plan for `rate_bps` of UDP payload (bits per second, > 0) in datagrams of `datagram_bytes`
// (1..65000), with or without GSO: a batch is the datagrams of kBatchInterval_s at the rate, at
// least one, at most one full sendmmsg.
UdpBatchPlan plan_udp_batches(double rate_bps, std::size_t datagram_bytes, bool gso);

// A token bucket in bytes that fills at a rate up to a depth. Times are seconds on any one clock
// the caller keeps. Not thread-safe.
class TokenBucket {
 public:
  // Starts with `initial_bytes` (at most the depth) at `now_s`.
  TokenBucket(double bytes_per_s, double depth_bytes, double initial_bytes, double now_s);
  // Adds the tokens of the time since the last refill, capped at the depth.
  void refill(double now_s);
  // Takes `bytes` when the bucket holds them; false (and nothing taken) otherwise.
  bool take(double bytes);
  // Gives back tokens that were taken but not used (a send the kernel refused in part).
  void give_back(double bytes);
  // Seconds until the bucket holds `bytes` at its rate (0 when it does).
  double wait_s(double bytes) const;
  double tokens() const { return tokens_; }

 private:
  double rate_;
  double depth_;
  double tokens_;
  double last_s_;
};

// A UDP source's bucket for `plan` at `rate_bps`: depth max(2 batches, kBucketDepth_s of the rate),
// one batch to start with.
TokenBucket udp_bucket(const UdpBatchPlan& plan, double rate_bps, double now_s);

// The rate a paced source reached when it fell short of its target: 8 x bytes_sent / active_s
// when that is below 99% of `target_bps` (the source could not keep its pace: the target is above
// its ceiling); 0 when it kept it, when there is no target, or before it ran.
double source_ceiling_bps(double target_bps, std::uint64_t bytes_sent, double active_s);

}  // namespace contend::emulator
