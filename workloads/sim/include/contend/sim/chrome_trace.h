#pragma once
// Chrome trace (chrome://tracing, Perfetto) of a simulated or measured iteration: pid = rank,
// tid 0 compute, 1 send, 2 recv; one complete event per action, flow arrows from each send to
// its receive. Pure; thread-safe.

#include <cstddef>
#include <string>

#include "contend/sim/simulator.h"

namespace contend::sim {

// The most events a trace holds (about 150 MB of JSON, what Perfetto opens): `contend sim` refuses
// to record a longer one, a worker keeps its last iterations within it.
inline constexpr std::size_t kMaxTraceEvents = 1'000'000;

// The trace as JSON text. Requires a result simulated with SimConfig::record_trace.
std::string chrome_trace_json(const SimResult& result);

}  // namespace contend::sim
