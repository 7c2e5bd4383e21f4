#pragma once
// Private: expansion of a scenario's "timeline" array into timed events (scenario_parser.cpp
// parses the rest). Each entry's kind is looked up in the pattern registry (patterns/), whose
// expansion turns it into plain rate changes or flow starts and stops.

#include <vector>

#include "contend/common/json_reader.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator::detail {

// The events a scenario's (or a flow job's) expansion has made so far, at most kMaxScenarioEvents.
// Not thread-safe.
class EventBudget {
 public:
  // Errors naming `where`, the count and the limit unless `count` more events fit. Patterns call
  // it with what they will make before they make it; take() counts what they made.
  Result<void> expect(const JsonReader& where, double count) const;
  Result<void> take(const JsonReader& where, std::size_t count = 1);

 private:
  std::size_t used_ = 0;
};

struct TimelineContext {
  const Scenario& scenario;  // nodes, links, duration and seed already parsed
  const FileReader& read;
  std::string base_dir;  // for relative trace paths
  EventBudget& budget;
};

// "a", "b" or "c": the names a key accepts, for error messages.
std::string quoted(const std::vector<std::string>& names);

// Errors naming `p`'s member `key` and the limit unless `seconds` is at least kMinPatternPeriod.
Result<void> check_min_period(const JsonReader& p, const std::string& key, double seconds);

// Appends the events of every entry of the array `timeline` at offset `offset_s`.
Result<void> expand_timeline(const JsonReader& timeline, double offset_s, const TimelineContext& ctx,
                             std::vector<Event>& out);

// Parses a flow object ("flow": {...}).
Result<FlowSpec> parse_flow(const JsonReader& r, const Scenario& scenario);

// The keys of a flow object besides its ends, name and duration, which every flow of a traffic
// pattern shares: protocol, streams, rate, congestion, message_size.
extern const std::vector<std::string> kFlowOptionKeys;
// Reads those keys of `r` into `f`.
Result<void> parse_flow_options(const JsonReader& r, FlowSpec& f);

}  // namespace contend::emulator::detail
