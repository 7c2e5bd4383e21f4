#pragma once
// What a cell's traffic put on the scenario's links, read back from its events log: per shaped end
// (a link's egress at one node, a fabric's port) the bytes it sent between the play's first and
// last sample, and, where the shaping splits them (HTB's workload and background classes), the
// workload's share. A job's bytes are what its hosts sent into the network; a job whose steps
// moved almost nothing there took another path (docs/own-job.md#paths-around-the-links).
// Private to the runner.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/json_reader.h"
#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/runner/results/port_bytes.h"
#include "nlohmann/json.hpp"

namespace contend::runner {

// Every shaped end the events log at `events_path` sampled, in the order first seen: its
// per-class `sample` lines (first to last sample of each counter) or a fabric's `port_index` and
// `ports` lines (the KiB of each summed). kNotFound when the file cannot be read, kParse naming
// its line when a line is not JSON or a sample's counters are not numbers.
Result<std::vector<PortBytes>> port_bytes(const std::string& events_path);

// The bytes the hosts of `s` sent into the network through its shaped ends: the workload share of
// each (all of it where no background flow runs). nullopt when background flows share ends whose
// counters do not split them (TBF; an experiment refuses ranks on a fabric host a flow uses): the
// job's bytes cannot be told from theirs.
std::optional<std::uint64_t> hosts_sent(const std::vector<PortBytes>& ports, const emulator::Scenario& s);

// cells.jsonl's "link_bytes": [{"link", "node", "bytes", "workload"}], the ends that sent anything.
nlohmann::ordered_json port_bytes_json(const std::vector<PortBytes>& ports);
// The same read back from `r` (an array): kParse naming the entry that is not one.
Result<std::vector<PortBytes>> read_port_bytes(const JsonReader& r);

// Over a cell's repetitions, each end's median of what it sent (and of the workload's share, where
// every repetition that sent anything there split it), in the order the ends were first seen; an
// end a repetition does not list sent nothing in it.
std::vector<PortBytes> median_port_bytes(const std::vector<std::vector<PortBytes>>& repetitions);

}  // namespace contend::runner
