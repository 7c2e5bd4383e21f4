// "ramp": {"from", "to", "over", "steps"}: `steps` equal steps over `over`, from `from` (default:
// each link's base rate) to `to`.

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_ramp(PatternCall& call) {
  const JsonReader p = call.body();
  if (auto ok = p.check_keys({"from", "to", "over", "steps"}); !ok) {
    return ok;
  }
  auto from = p.optional_rate_bps("from");
  auto to = p.rate_bps("to");
  auto over = p.duration("over");
  auto steps = p.optional_integer("steps");
  if (auto e = first_error(from, to, over, steps)) {
    return *e;
  }
  const std::int64_t n = steps->value_or(10);
  if (n < 1 || n > 100000) {
    return p.error_at("steps", "expected 1 to 100000 steps, got " + std::to_string(n));
  }
  if (auto ok = call.need_links(); !ok) {
    return ok;
  }
  const double over_s = to_seconds(*over);
  for (const LinkSpec* l : call.links()) {
    const double start_rate = from->value_or(l->rate_bps);
    // Without "from" the ramp starts where the link is: its first step is the first change.
    for (std::int64_t i = from->has_value() ? 0 : 1; i <= n; ++i) {
      const double f = static_cast<double>(i) / static_cast<double>(n);
      if (auto ok = call.set_rate(p, {l}, call.at_s() + f * over_s, start_rate + f * (*to - start_rate)); !ok) {
        return ok;
      }
    }
  }
  return {};
}

PatternItem ramp_pattern() {
  return {{"", "ramp", "equal steps from one rate to another", {}}, PatternKind{expand_ramp}};
}

}  // namespace contend::emulator::detail
