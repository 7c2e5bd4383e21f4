// {"at": "2s", "link": "a", "stall": "30ms"}: from then on every message on the link(s), in both
// directions, waits the stall before it is sent, one after another ("0s" ends it): PipeMorph's
// straggler, applied by the runtime's transport and the simulator (scenario/events.h, SetStall).

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_stall(PatternCall& call) {
  auto stall = call.entry().duration("stall");
  if (!stall) {
    return stall.error();
  }
  return call.set_stall(call.entry(), call.links(), call.at_s(), to_seconds(*stall));
}

PatternItem stall_pattern() {
  return {{"", "stall", "every message on the link waits this long before it is sent, one after another", {}},
          PatternKind{expand_stall}};
}

}  // namespace contend::emulator::detail
