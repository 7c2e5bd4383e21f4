// The one table of traffic shapes: a line each, in the order help and errors list them.
// tests/unit/emulator/registry_docs_test.cpp fails when this table and docs/scenario-format.md
// disagree.

#include "scenario/traffic/traffic.h"

namespace contend::emulator {

const Registry<TrafficKind>& traffic_patterns() {
  using namespace detail;
  static const Registry<TrafficKind> kTable("traffic pattern",
                                            {pairs_traffic(), ring_traffic(), incast_traffic(), all_to_all_traffic()});
  return kTable;
}

}  // namespace contend::emulator
