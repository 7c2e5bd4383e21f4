#pragma once
// The machine's CPU time as the kernel counts it (/proc/stat's first line), for how much of it a
// hypervisor took while a cell ran: on a shared virtual machine that "steal" stalls every process
// alike (an emulated stage sleeps past its time, the network stack waits), noise that falls on
// whichever cells ran while the host was busy. Thread-safe (reads /proc).

#include <cstdint>
#include <string>
#include <string_view>

#include "contend/common/result.h"

namespace contend {

struct CpuTimes {
  std::uint64_t steal = 0;  // clock ticks the hypervisor ran something else on this machine's CPUs
  std::uint64_t total = 0;  // clock ticks of every kind, all CPUs together
};

// The aggregate "cpu" line of /proc/stat's text: user nice system idle iowait irq softirq steal
// (guest time is inside user's and nice's, so it is not added again). kParse saying what is wrong.
Result<CpuTimes> parse_cpu_times(std::string_view proc_stat);

// The same, read from `path`.
Result<CpuTimes> read_cpu_times(const std::string& path = "/proc/stat");

// The share of the machine's CPU time between two readings that the hypervisor took: 0 when no
// time passed (or the counters went back, as after a restore).
double steal_share(const CpuTimes& before, const CpuTimes& after);

}  // namespace contend
