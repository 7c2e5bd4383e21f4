// The one table of fabric kinds: a line each, in the order help and errors list them.
// tests/unit/emulator/registry_docs_test.cpp fails when this table and docs/scenario-format.md
// disagree.

#include "scenario/fabrics/fabric.h"

namespace contend::emulator {

const Registry<FabricKind>& fabric_kinds() {
  using namespace detail;
  static const Registry<FabricKind> kTable("fabric", {leaf_spine_fabric(), fat_tree_fabric(), rail_fabric()});
  return kTable;
}

}  // namespace contend::emulator
