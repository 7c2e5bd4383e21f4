// The one table of shaping disciplines: a line each, with the data the parser checks scenarios
// against and the factory of the code that installs it. docs/extending.md says how to add one;
// tests/unit/registry_docs_test.cpp fails when this table and docs/scenario-format.md disagree.

#include <limits>

#include "discipline.h"

namespace contend::emulator {

// Each factory is defined in its own file, disciplines/<name>.cpp.
std::unique_ptr<Discipline> make_htb(const LinkSpec& link, const std::string& background_src);
std::unique_ptr<Discipline> make_tbf(const LinkSpec& link, const std::string& background_src);

namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();  // 64-bit rates
constexpr double kLibnlTbfMaxBps = 17e9;  // libnl sets tbf's rate as 32-bit bytes per second

const std::vector<DisciplineEntry>& table() {
  // {name, help, highest rate, preemption classes, netem}, factory
  static const std::vector<DisciplineEntry> kTable = {
      {{"htb", "a workload and a background class under the link's rate", kNoLimit, true, true}, make_htb},
      {{"tbf", "one token bucket that all traffic shares", kLibnlTbfMaxBps, false, false}, make_tbf},
  };
  return kTable;
}

}  // namespace

const DisciplineEntry* find_discipline_entry(std::string_view name) {
  for (const DisciplineEntry& e : table()) {
    if (e.info.name == name) {
      return &e;
    }
  }
  return nullptr;
}

const std::vector<DisciplineInfo>& disciplines() {
  static const std::vector<DisciplineInfo> kInfos = [] {
    std::vector<DisciplineInfo> out;
    for (const DisciplineEntry& e : table()) {
      out.push_back(e.info);
    }
    return out;
  }();
  return kInfos;
}

const DisciplineInfo* find_discipline(std::string_view name) {
  const DisciplineEntry* e = find_discipline_entry(name);
  return e == nullptr ? nullptr : &e->info;
}

std::vector<std::string_view> discipline_names(bool (*has)(const DisciplineInfo&)) {
  std::vector<std::string_view> out;
  for (const DisciplineInfo& d : disciplines()) {
    if (has == nullptr || has(d)) {
      out.push_back(d.name);
    }
  }
  return out;
}

}  // namespace contend::emulator
