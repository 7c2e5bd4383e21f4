#pragma once
// Private: the eBPF classifier of the fair-queue discipline (disciplines/fair_queue.cpp). It gives
// each flow (IPv4 addresses, protocol and, for TCP and UDP, ports) one of `queues` HTB classes
// 1:<first_minor + i>: a new flow, or one idle for a second, takes the class no packet used for
// longest, and keeps it while it sends. So up to `queues` flows at once never share a queue, where
// a hash (SFQ's way) puts 2 of 4 flows in one of 16 queues a third of the time. Packets that are
// not IPv4 are one flow. The kernel's own fair queues (sch_fq, sch_sfq, fq_codel) are missing on
// machines like this project's CI; HTB and cls_bpf are there.

#include <cstdint>

#include "contend/common/fd.h"
#include "net/tc.h"

namespace contend::emulator::detail {

inline constexpr int kFlowClassifierMaxQueues = 64;

// The classifier loaded into the kernel with its own flow table (4096 flows, least recently
// seen evicted first) and class clocks: a program descriptor for add_bpf_classifier. `queues` a
// power of two up to kFlowClassifierMaxQueues. kUnsupported, saying what is missing, where the
// kernel has no eBPF or refuses the program.
Result<Fd> load_flow_classifier(std::uint32_t first_minor, int queues);

// Loads the classifier once and drops it: whether a fair-queue link can be built here, asked
// before anything is.
Result<void> probe_flow_classifier();

}  // namespace contend::emulator::detail
