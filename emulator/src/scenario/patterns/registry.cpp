// The one table of timeline entry kinds: a line each. The order is the order error messages list
// them in. docs/extending.md says how to add one; tests/unit/emulator/registry_docs_test.cpp fails when
// this table and docs/scenario-format.md disagree.

#include "scenario/patterns/pattern.h"

namespace contend::emulator {

const Registry<PatternKind>& timeline_patterns() {
  using namespace detail;
  static const Registry<PatternKind> kTable(
      "timeline pattern", {rate_pattern(), flow_pattern(), traffic_pattern(), stall_pattern(), state_pattern(),
                           periodic_pattern(), random_pattern(), ramp_pattern(), trace_pattern(), loop_pattern()});
  return kTable;
}

}  // namespace contend::emulator
