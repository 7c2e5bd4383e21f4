#pragma once
// An experiment's "schedules", parsed for experiment.cpp: each resolved once for the workload.
// Private to the runner.

#include <vector>

#include "contend/common/json_reader.h"
#include "contend/common/result.h"
#include "contend/pipeline/exec/workload.h"
#include "contend/runner/experiment/schedule_entry.h"

namespace contend::runner {

// The "schedules" member of `r`: each a spec or an entry object, resolved for `w` (a model
// workload must have a layer for each of a schedule's stages), names unique.
Result<std::vector<ScheduleEntry>> parse_schedules(const JsonReader& r, const pipeline::Workload& w);

}  // namespace contend::runner
