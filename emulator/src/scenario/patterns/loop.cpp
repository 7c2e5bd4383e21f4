// "loop": {"every", "until", "timeline": [...]}: the inner entries, at times relative to each
// pass, every `every`; a pass's events stay inside the loop's window.

#include <algorithm>

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_loop(PatternCall& call) {
  const JsonReader p = call.body();
  if (auto ok = p.check_keys({"every", "until", "timeline"}); !ok) {
    return ok;
  }
  if (auto ok = call.no_link("a loop's events name their own links"); !ok) {
    return ok;
  }
  auto every = p.duration("every");
  auto end = call.until(p);
  if (auto e = first_error(every, end)) {
    return *e;
  }
  if (!p.has("timeline")) {
    return p.error_at("timeline", "missing; expected the events of one pass, at times relative to its start");
  }
  const double every_s = to_seconds(*every);
  if (auto ok = check_min_period(p, "every", every_s); !ok) {
    return ok;
  }
  // Each pass counts as an event (an empty pass still costs its parse), before any is made.
  if (auto ok = call.expect_events(p, on_off_count(call.at_s(), *end, every_s)); !ok) {
    return ok;
  }
  std::vector<Event>& out = call.events();
  const std::size_t before = out.size();
  for (double base = call.at_s(); base < *end; base += every_s) {
    if (auto ok = call.context().budget.take(p); !ok) {
      return ok;
    }
    if (auto ok = expand_timeline(p.at("timeline"), base, call.context(), out); !ok) {
      return ok;
    }
  }
  out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(),
                           [&](const Event& e) { return e.at_s >= *end; }),
            out.end());
  return {};
}

PatternItem loop_pattern() {
  return {{"", "loop", "inner entries repeated every `every`", {}}, PatternKind{expand_loop}};
}

}  // namespace contend::emulator::detail
