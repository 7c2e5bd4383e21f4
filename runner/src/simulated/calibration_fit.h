#pragma once
// What the fits of a real run's calibration and of a host's share. Private to the runner.

#include <optional>

#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/simulated/calibration.h"
#include "contend/runner/truth/network.h"

namespace contend::runner {

// `schedule` simulated on `links` under `c`'s costs with `latency_s` per transfer: samples/s (over
// `window` when set).
Result<double> simulated_at(const Workload& w, const Calibration& c, const pipeline::ScheduleChoice& schedule,
                            const ScenarioNetwork& links, double latency_s, const std::optional<MeasureWindow>& window);

// The latency at which `schedule` simulated on `links` under `c`'s costs gives `measured`
// samples/s (over `window` when set): fit_latency of that simulation.
Result<double> fit_cell(const Workload& w, const Calibration& c, const pipeline::ScheduleChoice& schedule,
                        const ScenarioNetwork& links, double measured, const std::optional<MeasureWindow>& window);

}  // namespace contend::runner
