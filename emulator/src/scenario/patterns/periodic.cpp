// "periodic": {"period", "on", "rate" | "flow" | "stall", "until"}: the effect for `on` of every `period`,
// the base rate (or no flow, or no stall) between.

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_periodic(PatternCall& call) {
  const JsonReader p = call.body();
  if (auto ok = p.check_keys({"period", "on", "rate", "flow", "stall", "until"}); !ok) {
    return ok;
  }
  auto period = p.duration("period");
  auto on = p.duration("on");
  auto end = call.until(p);
  if (auto e = first_error(period, on, end)) {
    return *e;
  }
  const double period_s = to_seconds(*period);
  const double on_s = to_seconds(*on);
  if (auto e = first_error(check_min_period(p, "period", period_s), check_min_period(p, "on", on_s))) {
    return *e;
  }
  if (!(on_s < period_s)) {
    return p.error_at("on", "expected a duration below the period (" + format_seconds(period_s) + ")");
  }
  auto what = call.effect(p);
  if (!what) {
    return what.error();
  }
  // Each episode is a flow's start and stop, or a cap and the base rate on every link.
  const double per_episode = what->flow ? 2.0 : 2.0 * static_cast<double>(call.links().size());
  if (auto ok = call.expect_events(p, on_off_count(call.at_s(), *end, period_s) * per_episode); !ok) {
    return ok;
  }
  for (const Episode& e : on_off_episodes(call.at_s(), *end, on_s, period_s)) {
    if (auto ok = call.episode(p, *what, e.start_s, e.length_s); !ok) {
      return ok;
    }
  }
  return {};
}

PatternItem periodic_pattern() {
  return {{"", "periodic", "the effect for `on` of every `period`", {}}, PatternKind{expand_periodic}};
}

}  // namespace contend::emulator::detail
