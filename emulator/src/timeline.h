#pragma once
// Private: expansion of a scenario's "timeline" array into timed events (scenario_parser.cpp
// parses the rest). Each entry's kind is looked up in the pattern registry (patterns/), whose
// expansion turns it into plain rate changes or flow starts and stops.

#include <vector>

#include "contend/common/json_reader.h"
#include "contend/emulator/scenario.h"

namespace contend::emulator::detail {

struct TimelineContext {
  const Scenario& scenario;  // nodes, links, duration and seed already parsed
  const FileReader& read;
  std::string base_dir;  // for relative trace paths
};

// Appends the events of every entry of the array `timeline` at offset `offset_s`.
Result<void> expand_timeline(const JsonReader& timeline, double offset_s, const TimelineContext& ctx,
                             std::vector<Event>& out);

// Parses a flow object ("flow": {...}).
Result<FlowSpec> parse_flow(const JsonReader& r, const Scenario& scenario);

}  // namespace contend::emulator::detail
