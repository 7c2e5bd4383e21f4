// The one table of shaping disciplines: a line each, with the data the parser checks scenarios
// against and the factory of the code that installs it. docs/extending.md says how to add one;
// tests/unit/registry_docs_test.cpp fails when this table and docs/scenario-format.md disagree.

#include "net/disciplines/discipline.h"

namespace contend::emulator {

// Each factory is defined in its own file, disciplines/<name>.cpp.
std::unique_ptr<Discipline> make_htb(const LinkSpec& link, const std::string& background_src);
std::unique_ptr<Discipline> make_tbf(const LinkSpec& link, const std::string& background_src);

namespace {

// The lowest rate of a class or bucket: its burst (at least 192 KiB, htb_params.h) is sent to the
// kernel as the time it takes at the rate, in 32-bit ticks of 64 ns (274.9 s); below about
// 5.7 kbit that time wraps and the bucket comes out tiny (measured: 192 KiB at 4 kbit installs
// as 59 KB). 8 kbit (1000 bytes/s) leaves a margin.
constexpr double kMinClassBps = 8e3;
// HTB's 64-bit rates go far higher, but the burst that keeps the rate (4 ms of it, htb_params.h)
// is a 32-bit byte count: 2^31 bytes in 4 ms is 4.29 Tbit/s; above, bursts shrink below 4 ms and
// the rate is no longer met.
constexpr double kHtbMaxBps = 4e12;
constexpr double kLibnlTbfMaxBps = 17e9;  // libnl sets tbf's rate as 32-bit bytes per second

const std::vector<DisciplineEntry>& table() {
  // {name, help, lowest class rate, highest rate, preemption classes, netem}, factory
  static const std::vector<DisciplineEntry> kTable = {
      {{"htb", "a workload and a background class under the link's rate", kMinClassBps, kHtbMaxBps, true, true},
       make_htb},
      {{"tbf", "one token bucket that all traffic shares", kMinClassBps, kLibnlTbfMaxBps, false, false}, make_tbf},
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
