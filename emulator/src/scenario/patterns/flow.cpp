// {"at": "5s", "flow": {"from": "n0", "to": "n1", ..., "duration": "10s"}}: a background flow
// (contend mode) from then on, for its duration or to the end.

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_flow(PatternCall& call) {
  if (auto ok = call.no_link("a flow runs between nodes"); !ok) {
    return ok;
  }
  auto flow = parse_flow(call.body(), call.scenario());
  auto duration = call.body().optional_duration("duration");
  if (auto e = first_error(flow, duration)) {
    return *e;
  }
  return call.add_flow(call.entry(), call.at_s(), *flow,
                       *duration ? std::optional<double>(to_seconds(**duration)) : std::nullopt);
}

PatternItem flow_pattern() {
  return {{"", "flow", "a background flow from then on, for its duration", {}}, PatternKind{expand_flow}};
}

}  // namespace contend::emulator::detail
