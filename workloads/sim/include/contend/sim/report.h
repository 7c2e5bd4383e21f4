#pragma once
// Writers for simulation results: the contend.sim/1 JSON document and the console table.
// Pure; thread-safe.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contend/sim/simulator.h"

namespace contend::sim {

// {"schema": "contend.sim/1", "inputs": <inputs>, "results": [...]}: per schedule `schedule`,
// `makespan_s`, `throughput_mb_per_s`, `bubble_fraction`, `peak_inflight` and
// `peak_memory_bytes` (arrays per rank), and per-rank busy/wait/idle seconds and bytes sent.
nlohmann::ordered_json sim_json(const std::vector<SimResult>& results, const nlohmann::ordered_json& inputs);

// A fixed-width table, one row per schedule, for a terminal.
std::string sim_table(const std::vector<SimResult>& results);

}  // namespace contend::sim
