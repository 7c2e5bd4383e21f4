#pragma once
// The machine's CPU time as the kernel counts it (/proc/stat's first line), for how much of it a
// hypervisor took while a cell ran: on a shared virtual machine that "steal" stalls every process
// alike (an emulated stage sleeps past its time, the network stack waits), noise that falls on
// whichever cells ran while the host was busy; and how much other processes of this machine took.
// Thread-safe (reads /proc, getrusage).

#include <cstdint>
#include <string>
#include <string_view>

#include "contend/common/result.h"

namespace contend {

struct CpuTimes {
  std::uint64_t steal = 0;  // clock ticks the hypervisor ran something else on this machine's CPUs
  std::uint64_t total = 0;  // clock ticks of every kind, all CPUs together
  std::uint64_t busy = 0;   // clock ticks processes ran (user, nice and system)
};

// The aggregate "cpu" line of /proc/stat's text: user nice system idle iowait irq softirq steal
// (guest time is inside user's and nice's, so it is not added again). kParse saying what is wrong.
Result<CpuTimes> parse_cpu_times(std::string_view proc_stat);

// The same, read from `path`.
Result<CpuTimes> read_cpu_times(const std::string& path = "/proc/stat");

// The share of the machine's CPU time between two readings that the hypervisor took: 0 when no
// time passed (or the counters went back, as after a restore).
double steal_share(const CpuTimes& before, const CpuTimes& after);

// CPU seconds this process and its children (those reaped, with what they reaped) have run, user
// and system: what a run's own processes took, so that the rest of the machine's is someone else's.
double own_cpu_seconds();

// The share of the machine's CPU time between two readings that processes other than this one and
// its children ran (`own_s`: own_cpu_seconds() between the same readings), at `ticks_per_s`
// (sysconf(_SC_CLK_TCK)): a busy neighbour, invisible in steal. Kernel work for the network (irq,
// softirq) is not counted on either side. 0 when no time passed.
double others_share(const CpuTimes& before, const CpuTimes& after, double own_s, double ticks_per_s);

}  // namespace contend
