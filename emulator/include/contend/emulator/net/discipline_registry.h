#pragma once
// The shaping disciplines a link's "qdisc" may name (docs/scenario-format.md), in the one registry
// mechanism (common/registry.h): each item's entry is its name and help, its kind what it can do
// (the data the scenario parser checks links against) and the factory of its code. One line per
// discipline in net/disciplines/registry.cpp; the code is net/disciplines/<name>.cpp.
// Thread-safe: the table is constant.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "contend/common/registry.h"
#include "contend/common/result.h"

namespace contend::emulator {

class Discipline;  // net/disciplines/discipline.h: what each discipline's code implements
struct LinkSpec;

struct DisciplineKind {
  double min_rate_bps = 0;          // the lowest rate any one of its classes or buckets may have
  double max_rate_bps = 0;          // the highest rate it can install (the parser refuses more)
  bool preemption_classes = false;  // workload and background classes: "preemption", "workload_share"
  bool netem = false;               // takes netem delay and loss under its classes
  int flow_queues = 0;              // a queue per flow, this many, each guaranteed its share
  // What it needs of the kernel beyond HTB and TBF, checked before anything is built (nullptr:
  // nothing); kUnsupported names what is missing.
  Result<void> (*probe)() = nullptr;
  // Makes its code for one end of `link`, whose background traffic leaves from `background_src`
  // ("" when the tree is only attached to, not installed).
  std::unique_ptr<Discipline> (*make)(const LinkSpec& link, const std::string& background_src) = nullptr;
};

using DisciplineItem = Registry<DisciplineKind>::Item;

// Every registered discipline, in table order.
const Registry<DisciplineKind>& disciplines();
// The discipline called `name`, or nullptr.
const DisciplineItem* find_discipline(std::string_view name);
// The names of the disciplines with a capability (`has` true), in table order; all with nullptr.
std::vector<std::string> discipline_names(bool (*has)(const DisciplineKind&) = nullptr);

}  // namespace contend::emulator
