#include "contend/emulator/flows/dpdk_source.h"

#include <arpa/inet.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_udp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <iterator>
#include <thread>
#include <utility>
#include <vector>

#include "contend/common/socket.h"
#include "contend/emulator/net/netns.h"

namespace contend::emulator {
namespace {

Error dpdk_error(const std::string& what) {
  return make_error(Errc::kUnsupported, what + ": " + rte_strerror(rte_errno));
}

void fill_frame(rte_mbuf* m, const rte_ether_addr& src_mac, std::uint32_t src_ip, std::uint32_t dst_ip,
                std::uint16_t frame_bytes) {
  // Headers only: the payload's contents do not matter, and zeroing 1.5 KB a frame halves the rate.
  char* p = rte_pktmbuf_append(m, frame_bytes);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
  std::memset(&eth->dst_addr, 0xff, sizeof eth->dst_addr);  // broadcast: no ARP needed
  eth->src_addr = src_mac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  *ip = rte_ipv4_hdr{};
  ip->version_ihl = 0x45;
  ip->total_length = rte_cpu_to_be_16(static_cast<std::uint16_t>(frame_bytes - sizeof(rte_ether_hdr)));
  ip->time_to_live = 64;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = src_ip;
  ip->dst_addr = dst_ip;
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  *udp = rte_udp_hdr{};
  udp->src_port = rte_cpu_to_be_16(40000);
  udp->dst_port = rte_cpu_to_be_16(9);  // discard
  udp->dgram_len =
      rte_cpu_to_be_16(static_cast<std::uint16_t>(frame_bytes - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr)));
}

constexpr std::uint16_t kPort = 0;

// EAL without hugepages, PCI or shared config, on the af_packet socket of `o.iface`.
Result<void> start_eal(const DpdkSourceOptions& o) {
  const std::string prefix = "--file-prefix=contend-" + std::to_string(::getpid());
  const std::string vdev = "--vdev=net_af_packet0,iface=" + o.iface + ",qdisc_bypass=0";
  std::vector<std::string> args = {"contend-dpdk",     "--no-huge", "--no-pci", "-m", "1024",
                                   "--no-shconf",      prefix,      vdev,       "-l", "0",
                                   "--log-level=error"};
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
    return dpdk_error("rte_eal_init (" + vdev + ")");
  }
  return {};
}

// The af_packet port started with one queue each way; returns the pool its frames come from.
Result<rte_mempool*> start_port(const std::string& iface) {
  if (rte_eth_dev_count_avail() < 1) {
    return make_error(Errc::kUnsupported, "DPDK found no port: the net_af_packet driver did not attach to " + iface);
  }
  rte_mempool* pool = rte_pktmbuf_pool_create("contend_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
  if (pool == nullptr) {
    return dpdk_error("rte_pktmbuf_pool_create");
  }
  rte_eth_conf conf{};
  if (rte_eth_dev_configure(kPort, 1, 1, &conf) < 0 ||
      rte_eth_rx_queue_setup(kPort, 0, 256, rte_socket_id(), nullptr, pool) < 0 ||
      rte_eth_tx_queue_setup(kPort, 0, 1024, rte_socket_id(), nullptr) < 0 || rte_eth_dev_start(kPort) < 0) {
    return dpdk_error("configuring and starting the af_packet port on " + iface);
  }
  return pool;
}

// A full burst: the port takes this many frames per call, and the paced loop waits until a full
// burst is due rather than sending part of one (dpdk-testpmd's default burst).
constexpr std::uint16_t kBurst = 32;

// The frames of one burst, allocated and written once. Each send takes a reference per frame that
// the driver drops once it has the frame (net_af_packet copies it into its ring and frees it), so
// no frame is allocated, written or zeroed per packet. Owns its mbufs; not thread-safe.
class BurstFrames {
 public:
  static Result<BurstFrames> make(rte_mempool* pool, const rte_ether_addr& mac, std::uint32_t src, std::uint32_t dst,
                                  std::uint16_t frame_bytes) {
    BurstFrames f;
    if (rte_pktmbuf_alloc_bulk(pool, f.frames_, kBurst) != 0) {
      return dpdk_error("rte_pktmbuf_alloc_bulk(" + std::to_string(kBurst) + " frames)");
    }
    f.owned_ = true;
    for (rte_mbuf* m : f.frames_) {
      fill_frame(m, mac, src, dst, frame_bytes);
    }
    return f;
  }
  BurstFrames(BurstFrames&& o) noexcept : owned_(std::exchange(o.owned_, false)) {
    std::copy(std::begin(o.frames_), std::end(o.frames_), frames_);
  }
  BurstFrames& operator=(BurstFrames&&) = delete;
  ~BurstFrames() {
    if (owned_) {
      rte_pktmbuf_free_bulk(frames_, kBurst);
    }
  }

  // Hands the burst to the port once more; returns how many frames it took.
  std::uint16_t send() {
    for (rte_mbuf* m : frames_) {
      rte_mbuf_refcnt_update(m, 1);
    }
    const std::uint16_t sent = rte_eth_tx_burst(kPort, 0, frames_, kBurst);
    for (std::uint16_t i = sent; i < kBurst; ++i) {
      rte_mbuf_refcnt_update(frames_[i], -1);  // not taken: the reference is ours again
    }
    return sent;
  }

 private:
  BurstFrames() = default;
  rte_mbuf* frames_[kBurst] = {};
  bool owned_ = false;
};

// Until `until` on the steady clock: sleeps while far, spins the last stretch (a sleep wakes tens
// of microseconds late, a burst at line rate is due every few microseconds).
void wait_until(std::chrono::steady_clock::time_point until) {
  constexpr auto kSpin = std::chrono::microseconds(100);
  const auto now = std::chrono::steady_clock::now();
  if (until - now > kSpin) {
    std::this_thread::sleep_for(until - now - kSpin);
  }
  while (std::chrono::steady_clock::now() < until) {
    rte_pause();
  }
}

// Full bursts for o.duration_s, paced to o.rate_bps (0: as fast as the port takes them): each
// burst waits until all of its frames are due, and a late one is followed at once by the next.
DpdkSourceReport send_frames(const DpdkSourceOptions& o, BurstFrames& frames) {
  DpdkSourceReport report;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
  const double frame_s = o.rate_bps > 0 ? 8.0 * o.frame_bytes / o.rate_bps : 0.0;
  for (auto now = start; now < end; now = Clock::now()) {
    if (o.rate_bps > 0) {
      const double due_s = frame_s * static_cast<double>(report.packets + kBurst);
      const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(due_s));
      if (due > now) {
        wait_until(std::min(due, end));
        continue;
      }
    }
    const std::uint16_t sent = frames.send();
    report.packets += sent;
    report.bytes += static_cast<std::uint64_t>(sent) * o.frame_bytes;
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace

namespace {

Result<DpdkSourceReport> run_source(const DpdkSourceOptions& o) {
  if (o.frame_bytes < 64 || o.frame_bytes > 1514) {
    return make_error(Errc::kInvalidArgument,
                      "frame size must be 64..1514 bytes, got " + std::to_string(o.frame_bytes));
  }
  auto src = parse_ipv4(o.src_address);
  auto dst = parse_ipv4(o.dst_address);
  if (auto e = first_error(src, dst)) {
    return *e;
  }
  // EAL's threads and the af_packet socket inherit the namespace of this thread.
  if (auto ok = enter_netns(o.netns); !ok) {
    return ok.error();
  }
  if (auto ok = start_eal(o); !ok) {
    return ok.error();
  }
  struct Cleanup {
    ~Cleanup() { rte_eal_cleanup(); }
  } cleanup;
  auto pool = start_port(o.iface);
  if (!pool) {
    return pool.error();
  }
  rte_ether_addr mac{};
  rte_eth_macaddr_get(kPort, &mac);
  auto frames = BurstFrames::make(*pool, mac, src->s_addr, dst->s_addr, static_cast<std::uint16_t>(o.frame_bytes));
  if (!frames) {
    return frames.error();
  }
  const DpdkSourceReport report = send_frames(o, *frames);
  rte_eth_dev_stop(kPort);
  rte_eth_dev_close(kPort);
  return report;
}

}  // namespace

Result<DpdkSourceReport> run_dpdk_source(const DpdkSourceOptions& o) {
  // EAL, the port and its pool are released on the way out whatever ends the send; an exception
  // comes back as the error.
  try {
    return run_source(o);
  } catch (const std::exception& e) {
    return make_error(Errc::kInternal, std::string("DPDK source: ") + e.what());
  }
}

}  // namespace contend::emulator
