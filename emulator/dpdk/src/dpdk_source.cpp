#include "contend/emulator/dpdk_source.h"

#include <arpa/inet.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <cstring>
#include <thread>
#include <vector>

#include "contend/emulator/netns.h"

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

// Bursts of frames for o.duration_s, paced to o.rate_bps (0: as fast as the port takes them).
DpdkSourceReport send_frames(const DpdkSourceOptions& o, rte_mempool* pool, std::uint32_t src, std::uint32_t dst) {
  rte_ether_addr mac{};
  rte_eth_macaddr_get(kPort, &mac);
  DpdkSourceReport report;
  constexpr int kBurst = 32;
  rte_mbuf* burst[kBurst];
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const double frame_bits = 8.0 * o.frame_bytes;
  for (double elapsed = 0; elapsed < o.duration_s;
       elapsed = std::chrono::duration<double>(Clock::now() - start).count()) {
    int n = kBurst;
    if (o.rate_bps > 0) {
      const double due = o.rate_bps * elapsed / frame_bits - static_cast<double>(report.packets);
      n = static_cast<int>(std::min<double>(kBurst, due));
      if (n <= 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
    }
    if (rte_pktmbuf_alloc_bulk(pool, burst, static_cast<unsigned>(n)) != 0) {
      continue;
    }
    for (int i = 0; i < n; ++i) {
      fill_frame(burst[i], mac, src, dst, static_cast<std::uint16_t>(o.frame_bytes));
    }
    const std::uint16_t sent = rte_eth_tx_burst(kPort, 0, burst, static_cast<std::uint16_t>(n));
    for (int i = sent; i < n; ++i) {
      rte_pktmbuf_free(burst[i]);
    }
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
  in_addr src{}, dst{};
  if (::inet_pton(AF_INET, o.src_address.c_str(), &src) != 1 ||
      ::inet_pton(AF_INET, o.dst_address.c_str(), &dst) != 1) {
    return make_error(Errc::kInvalidArgument,
                      "expected IPv4 addresses, got " + o.src_address + " and " + o.dst_address);
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
  const DpdkSourceReport report = send_frames(o, *pool, src.s_addr, dst.s_addr);
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
