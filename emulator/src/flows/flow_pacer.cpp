#include "contend/emulator/flows/flow_pacer.h"

#include <algorithm>
#include <cmath>

namespace contend::emulator {

UdpBatchPlan plan_udp_batches(double rate_bps, std::size_t datagram_bytes, bool gso) {
  UdpBatchPlan p;
  p.datagram_bytes = std::max<std::size_t>(datagram_bytes, 1);
  if (gso) {
    p.segments = std::clamp<std::size_t>(kMaxGsoBytes / p.datagram_bytes, 1, kMaxGsoSegments);
    p.max_buffers = kMaxGsoBuffers;
  } else {
    p.segments = 1;
    p.max_buffers = kMaxDatagramsPerCall;
  }
  const double per_interval = rate_bps / 8.0 * kBatchInterval_s / static_cast<double>(p.datagram_bytes);
  const double most = static_cast<double>(p.segments * p.max_buffers);
  p.batch_datagrams = static_cast<std::size_t>(std::clamp(std::round(per_interval), 1.0, most));
  return p;
}

TokenBucket::TokenBucket(double bytes_per_s, double depth_bytes, double initial_bytes, double now_s)
    : rate_(bytes_per_s), depth_(depth_bytes), tokens_(std::min(initial_bytes, depth_bytes)), last_s_(now_s) {}

void TokenBucket::refill(double now_s) {
  if (now_s > last_s_) {
    tokens_ = std::min(depth_, tokens_ + rate_ * (now_s - last_s_));
    last_s_ = now_s;
  }
}

bool TokenBucket::take(double bytes) {
  if (tokens_ < bytes) {
    return false;
  }
  tokens_ -= bytes;
  return true;
}

void TokenBucket::give_back(double bytes) {
  tokens_ = std::min(depth_, tokens_ + bytes);
}

double TokenBucket::wait_s(double bytes) const {
  return tokens_ >= bytes || rate_ <= 0 ? 0.0 : (bytes - tokens_) / rate_;
}

TokenBucket udp_bucket(const UdpBatchPlan& plan, double rate_bps, double now_s) {
  const double batch = static_cast<double>(plan.batch_bytes());
  const double depth = std::max(2 * batch, rate_bps / 8.0 * kBucketDepth_s);
  return TokenBucket(rate_bps / 8.0, depth, batch, now_s);
}

double source_ceiling_bps(double target_bps, std::uint64_t bytes_sent, double active_s) {
  if (target_bps <= 0 || active_s <= 0) {
    return 0;
  }
  const double sent_bps = 8.0 * static_cast<double>(bytes_sent) / active_s;
  return sent_bps < 0.99 * target_bps ? sent_bps : 0.0;
}

}  // namespace contend::emulator
