#pragma once
// Private: what every shaping discipline implements, and its registration in the registry
// (net/disciplines/registry.cpp). A discipline builds and changes the qdisc tree of one link end's
// egress; the Shaper owns the tree (and removes it). One object per shaped end, used from one
// thread.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/scenario/scenario.h"
#include "net/tc.h"

namespace contend::emulator {

class Discipline {
 public:
  virtual ~Discipline() = default;
  // Adds a root qdisc at `rate_bps`, failing without a change when the interface has one, then
  // the rest of the tree; when a later step fails, removes the root again.
  virtual Result<void> install(const detail::TcTarget& tc, double rate_bps) = 0;
  // Changes the rate in place (never delete and re-add: that lets bursts through); in force when
  // it returns.
  virtual Result<void> set_rate(const detail::TcTarget& tc, double rate_bps) = 0;
  // Counters and configured rate of the tree's classes; the whole link's entry has link_level.
  virtual Result<std::vector<ClassStats>> stats(const detail::TcTarget& tc) const = 0;
};

// The lowest rate of a class or bucket: its burst (at least 192 KiB, htb_params.h) is sent to the
// kernel as the time it takes at the rate, in 32-bit ticks of 64 ns (274.9 s); below about
// 5.7 kbit that time wraps and the bucket comes out tiny (measured: 192 KiB at 4 kbit installs
// as 59 KB). 8 kbit (1000 bytes/s) leaves a margin.
inline constexpr double kMinClassBps = 8e3;

// The highest rate an HTB class keeps: HTB's 64-bit rates go far higher, but the burst that keeps
// the rate (4 ms of it, htb_params.h) is a 32-bit byte count: 2^31 bytes in 4 ms is 4.29 Tbit/s;
// above, bursts shrink below 4 ms and the rate is no longer met.
inline constexpr double kHtbMaxBps = 4e12;

// Each discipline's registration (entry and kind), defined in its file: net/disciplines/<name>.cpp.
DisciplineItem htb_discipline();
DisciplineItem tbf_discipline();
DisciplineItem fair_queue_discipline();

}  // namespace contend::emulator
