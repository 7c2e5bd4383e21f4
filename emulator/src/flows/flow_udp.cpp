#include "flows/flow_udp.h"

#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace contend::emulator {

UdpBatchSender::UdpBatchSender(std::vector<UdpSocket>& socks, std::size_t datagram_bytes, double rate_bps)
    : socks_(socks), rate_bps_(rate_bps) {
  plan_.datagram_bytes = datagram_bytes;
  if (auto ok = set_gso(static_cast<int>(datagram_bytes)); ok) {
    use_plan(true, rate_bps_);
    path_ = "sendmmsg, UDP GSO (" + std::to_string(plan_.segments) + " x " + std::to_string(datagram_bytes) +
            " B a buffer)";
  } else {
    (void)set_gso(0);
    use_plan(false, rate_bps_);
    path_ = "sendmmsg without UDP GSO (this kernel lacks it: " + ok.error().message + ")";
  }
}

Result<void> UdpBatchSender::set_gso(int gso_bytes) {
  for (UdpSocket& s : socks_) {
    if (auto ok = s.set_segment_bytes(gso_bytes); !ok) {
      return ok;
    }
  }
  return {};
}

void UdpBatchSender::use_plan(bool gso, double rate_bps) {
  gso_ = gso;
  plan_ = plan_udp_batches(rate_bps, plan_.datagram_bytes, gso);
  payload_.assign(plan_.segments * plan_.datagram_bytes, 'u');
  iov_.assign(plan_.max_buffers, iovec{payload_.data(), payload_.size()});
  msgs_.assign(plan_.max_buffers, mmsghdr{});
  for (std::size_t i = 0; i < msgs_.size(); ++i) {
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
  }
}

Result<std::uint64_t> UdpBatchSender::send(std::size_t datagrams) {
  CONTEND_CHECK(datagrams > 0 && plan_.buffers_for(datagrams) <= plan_.max_buffers,
                "UdpBatchSender::send: a batch larger than one sendmmsg");
  const std::size_t buffers = plan_.buffers_for(datagrams);
  std::size_t left = datagrams;
  for (std::size_t i = 0; i < buffers; ++i) {
    const std::size_t n = std::min(left, plan_.segments);
    iov_[i].iov_len = n * plan_.datagram_bytes;
    left -= n;
  }
  UdpSocket& s = socks_[next_];
  next_ = (next_ + 1) % socks_.size();
  auto sent = s.send_batch(msgs_.data(), static_cast<unsigned>(buffers));
  if (sent) {
    std::uint64_t bytes = 0;
    for (int i = 0; i < *sent; ++i) {
      bytes += msgs_[static_cast<std::size_t>(i)].msg_len;
    }
    gso_confirmed_ = gso_confirmed_ || (gso_ && *sent > 0);
    return bytes;
  }
  if (sent.error().os_errno == EIO && gso_ && !gso_confirmed_) {
    // The kernel took UDP_SEGMENT but the device cannot checksum GSO buffers: one datagram a message.
    (void)set_gso(0);
    use_plan(false, rate_bps_);
    path_ = "sendmmsg without UDP GSO (the device refused GSO buffers: " + sent.error().message + ")";
    return send(std::min(datagrams, plan_.segments * plan_.max_buffers));
  }
  return sent.error();
}

}  // namespace contend::emulator
