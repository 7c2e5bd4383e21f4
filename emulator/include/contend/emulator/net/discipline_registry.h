#pragma once
// The shaping disciplines a link's "qdisc" may name (docs/scenario-format.md), as pure data for
// the scenario parser, the timeline and the docs test. One table, disciplines/registry.cpp, holds
// one line per discipline: this data and the factory of its code (disciplines/<name>.cpp), which
// the Shaper installs. Thread-safe: the table is constant.

#include <string_view>
#include <vector>

namespace contend::emulator {

struct DisciplineInfo {
  std::string_view name;            // the value of a link's "qdisc"
  std::string_view help;            // one line; docs/scenario-format.md's row says it too
  double min_rate_bps = 0;          // the lowest rate any one of its classes or buckets may have
  double max_rate_bps = 0;          // the highest rate it can install (the parser refuses more)
  bool preemption_classes = false;  // workload and background classes: "preemption", "workload_share"
  bool netem = false;               // takes netem delay and loss under its classes
};

// Every registered discipline, in table order.
const std::vector<DisciplineInfo>& disciplines();
// The discipline called `name`, or nullptr.
const DisciplineInfo* find_discipline(std::string_view name);
// The names of the disciplines with a capability (`has` true), in table order; all with nullptr.
std::vector<std::string_view> discipline_names(bool (*has)(const DisciplineInfo&) = nullptr);

}  // namespace contend::emulator
