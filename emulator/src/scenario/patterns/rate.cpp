// {"at": "2s", "link": "a", "rate": "50Mbit"}: the link(s) at that rate from then on (cap mode).

#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_rate(PatternCall& call) {
  auto rate = call.entry().rate_bps("rate");
  if (!rate) {
    return rate.error();
  }
  return call.set_rate(call.entry(), call.links(), call.at_s(), *rate);
}

PatternItem rate_pattern() {
  return {{"", "rate", "the link's rate from then on", {}}, PatternKind{expand_rate}};
}

}  // namespace contend::emulator::detail
