#pragma once
// One entry of an experiment's "schedules" (docs/experiment-format.md). Plain values.

#include <optional>
#include <string>

#include "contend/common/spec.h"
#include "contend/pipeline/policy/policy.h"

namespace contend::runner {

// A schedule or policy, run over the workload's transport unless the entry names its own:
// {"schedule": "zb", "transport": "tcp:sends=wait", "name": "zb-wait"} (so one run measures
// Megatron's blocking sends beside offloaded ones, as PipeMorph's paper does).
struct ScheduleEntry {
  pipeline::ScheduleChoice schedule;  // the spec, resolved once for the workload
  std::optional<Spec> transport;      // unset: the workload's
  std::string name;                   // how results call it: "name", else the spec ("+ over TRANSPORT")
};

}  // namespace contend::runner
