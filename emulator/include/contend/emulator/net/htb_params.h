#pragma once
// tc parameter maths, pure: the token buckets that make HTB and TBF hit their rate.
// Measured here (issue 3): with burst >= max(4 ms x rate, 192 KiB) and quantum 64 KiB, TCP
// goodput is 0.956 x the shaped rate (1448 of 1514 bytes per frame) from 10 Mbit to 20 Gbit; the
// default burst of one MTU loses 7-25% at 1-5 Gbit. Thread-safe.

#include <cstdint>
#include <string>

#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

inline constexpr std::uint32_t kMinBurstBytes = 192 * 1024;
inline constexpr std::uint32_t kQuantumBytes = 64 * 1024;
inline constexpr double kBurstSeconds = 0.004;
inline constexpr double kQueueSeconds = 0.050;

// max(4 ms x rate, 192 KiB), in bytes, capped at 2^31 (the kernel's 32-bit buffer).
std::uint32_t burst_bytes_for(double rate_bps);
// What a shaped queue holds before it drops arrivals (tail drop), in bytes: the burst + 50 ms at
// the rate, capped at 2^31 - 1. TBF's queue, and each HTB leaf's bfifo: without one a leaf gets
// the kernel's pfifo of 1000 packets, which on a veth (GSO packets up to 64 KiB) holds up to 64 MiB,
// seconds at the rates links are shaped to, where a switch port holds milliseconds.
std::uint32_t queue_bytes_for(double rate_bps);

struct HtbClass {
  double rate_bps = 0;  // guaranteed
  double ceil_bps = 0;  // most it may borrow up to
  std::uint32_t burst_bytes = 0;
  std::uint32_t cburst_bytes = 0;
  std::uint32_t quantum_bytes = kQuantumBytes;
  int prio = 0;  // lower borrows first
};

// A class guaranteed `rate_bps`, borrowing up to `ceil_bps`, with bursts from burst_bytes_for.
HtbClass htb_class(double rate_bps, double ceil_bps, int prio);

// The classes under one link's HTB root: 1:1 (the link), 1:10 (workload), 1:20 (background).
struct HtbLinkClasses {
  HtbClass link;
  HtbClass workload;
  HtbClass background;
};

// Classes for a link of `rate_bps` under `preemption`:
//  background-first: background prio 0 guaranteed all but 0.1% (at least 8 kbit) kept for the
//    workload at prio 1, both may use the whole link: background takes all it can;
//  fair: each guaranteed half at the same prio, both may use the whole link;
//  split: workload guaranteed and capped at workload_share, background at the rest.
HtbLinkClasses htb_classes(double rate_bps, Preemption preemption, double workload_share);

// The preemption model: the rate the workload gets on `link` shaped at `rate_bps` while background
// traffic runs (`background_running`) at `background_bps` in total, 0 meaning unpaced (it takes
// all it can). Derived from the classes htb_classes installs, as HTB shares them: each class first
// gets its guaranteed rate (the background no more than it sends), then the link's spare rate is
// lent up to each ceil, to the lower prio first, evenly between equal prios. A discipline without
// preemption classes (tbf, fair-queue) is one queue that TCP flows share about evenly, or a queue
// per flow: modelled as fair.
// Used by the shaper's tests and the runner's simulated runs (runner/src/truth/network.cpp) alike.
double workload_rate_bps(const LinkSpec& link, double rate_bps, double background_bps, bool background_running);

// The rates `link` can have (base or in the timeline) under its discipline: from the rate at
// which its smallest class gets the discipline's min_rate_bps (half the link under
// background-first and fair, min(share, 1 - share) under split, 1 / flow_queues with a queue per
// flow, all of it without classes) to its max_rate_bps.
double lowest_rate_bps(const LinkSpec& link);
double highest_rate_bps(const LinkSpec& link);
// Why `rate_bps` cannot be installed on `link`, naming the range and the reason, e.g. "htb
// installs 16kbit to 4Tbit on this link (each class at least 8kbit; under fair a class gets 0.5
// of the link), got 1bit"; "" when it can.
std::string rate_problem(const LinkSpec& link, double rate_bps);

struct TbfParams {
  double rate_bps = 0;
  std::uint32_t burst_bytes = 0;
  std::uint32_t limit_bytes = 0;  // queue_bytes_for
};
TbfParams tbf_params(double rate_bps);

}  // namespace contend::emulator
