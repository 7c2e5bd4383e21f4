#pragma once
// The parts of an experiment file that describe contend's own pipeline (its workload and its
// schedules), parsed for experiment.cpp. Private to the runner.

#include "contend/common/json_reader.h"
#include "contend/common/result.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::runner {

// "schedules" into e.schedules: each a spec or an entry object, valid for e's workload (its
// scenarios and workload already read), names unique.
Result<void> parse_schedules(const JsonReader& r, Experiment& e);

}  // namespace contend::runner
