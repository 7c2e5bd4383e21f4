// The one table of shaping disciplines: a line each. docs/extending.md says how to add one;
// tests/unit/emulator/registry_docs_test.cpp fails when this table and docs/scenario-format.md disagree.

#include "net/disciplines/discipline.h"

namespace contend::emulator {

const Registry<DisciplineKind>& disciplines() {
  static const Registry<DisciplineKind> kTable("discipline",
                                               {htb_discipline(), tbf_discipline(), fair_queue_discipline()});
  return kTable;
}

const DisciplineItem* find_discipline(std::string_view name) {
  return disciplines().find(name);
}

std::vector<std::string> discipline_names(bool (*has)(const DisciplineKind&)) {
  return disciplines().names([has](const DisciplineKind& k) { return has == nullptr || has(k); });
}

}  // namespace contend::emulator
