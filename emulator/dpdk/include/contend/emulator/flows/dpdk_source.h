#pragma once
// The DPDK flow source (CONTEND_WITH_DPDK): UDP frames at a target rate or line rate from a
// node's namespace, with no NIC and no hugepages: EAL with --no-huge --no-pci -m 1024
// --no-shconf --file-prefix=<unique> and the interface through
// --vdev=net_af_packet0,iface=<veth>,qdisc_bypass=0. qdisc_bypass must be off: with the default,
// af_packet skips tc and the link's HTB never sees the traffic. Frames carry the link's
// background address, so the HTB filter classifies them like any background flow.
// EAL starts once per process: run_dpdk_source is for a process of its own (`contend
// dpdk-source`). Not thread-safe: it moves the calling thread into the node's namespace.

#include <cstdint>
#include <string>

#include "contend/common/result.h"

namespace contend::emulator {

struct DpdkSourceOptions {
  std::string netns;                 // the source node's namespace ("" = the caller's)
  std::string iface;                 // the veth to send on, in that namespace
  std::string src_address;           // IPv4 source (the link's background address)
  std::string dst_address;           // IPv4 destination
  double rate_bps = 0;               // frame bits per second; 0 = as fast as the port takes them
  std::uint32_t frame_bytes = 1500;  // Ethernet frame without FCS, 64..1514
  double duration_s = 1;
};

struct DpdkSourceReport {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;  // frame bytes handed to the port
  double seconds = 0;
  double pps() const { return seconds > 0 ? static_cast<double>(packets) / seconds : 0; }
  double bps() const { return seconds > 0 ? 8.0 * static_cast<double>(bytes) / seconds : 0; }
};

// Starts EAL in `netns`, sends for the duration, stops. Errors say why DPDK could not start
// (EAL's message: memory, permissions, a missing driver), with kUnsupported when this build has
// no DPDK.
Result<DpdkSourceReport> run_dpdk_source(const DpdkSourceOptions& options);

}  // namespace contend::emulator
