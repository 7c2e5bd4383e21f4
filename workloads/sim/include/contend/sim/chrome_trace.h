#pragma once
// Chrome trace (chrome://tracing, Perfetto) of a simulated or measured iteration: pid = rank,
// tid 0 compute, 1 send, 2 recv; one complete event per action, flow arrows from each send to
// its receive. Pure; thread-safe.

#include <string>

#include "contend/sim/simulator.h"

namespace contend::sim {

// The trace as JSON text. Requires a result simulated with SimConfig::record_trace.
std::string chrome_trace_json(const SimResult& result);

}  // namespace contend::sim
