// {"at": "3s", "link": "leaf0-spine0", "state": "down"}: from then on the link(s) are down (both
// ends' interfaces), or up again with "up"; a fabric reroutes around a link that is down
// (scenario/events.h, SetLinkState).

#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_state(PatternCall& call) {
  if (call.links().empty()) {
    return call.need_links();
  }
  auto state = call.entry().string("state");
  if (!state) {
    return state.error();
  }
  if (*state != "up" && *state != "down") {
    return call.entry().error_at("state", "expected \"up\" or \"down\", got \"" + *state + "\"");
  }
  if (call.at_s() >= call.scenario().duration_s) {
    return {};
  }
  if (auto ok = call.context().budget.take(call.entry(), call.links().size()); !ok) {
    return ok;
  }
  for (const LinkSpec* l : call.links()) {
    call.events().push_back(Event{call.at_s(), SetLinkState{l->name, *state == "up"}, call.entry().path()});
  }
  return {};
}

PatternItem state_pattern() {
  return {{"", "state", "the link goes down or comes back up", {}}, PatternKind{expand_state}};
}

}  // namespace contend::emulator::detail
