#pragma once
// Private: the adaptive controller's model of the pipeline (adaptive_model.cpp), shared by its
// search (adaptive_search.cpp) and its decisions (adaptive.cpp). Pure.

#include <vector>

#include "contend/pipeline/policy/measurements.h"
#include "contend/sim/simulator.h"

namespace contend::pipeline {

// The simulator's view of the measurements (per rank) for a family of `chunks` stages per rank,
// looped (stage s on rank s % p, each with 1/chunks of its rank's time and stash); appends the rate
// it uses per link to `link_bps`.
sim::SimConfig simulator_config(const Measurements& m, int stages, int chunks, std::vector<double>& link_bps);

// The slowest stage's forward plus backward: the unit of slack, and of what counts as a change.
double cycle_s(const Measurements& m);
// One message's time on link r (r -> r+1) at `bps`: stage r's activation over the rate; 0 when
// the rate is unmeasured or unlimited.
double message_s(const Measurements& m, int r, double bps);

// The time link r adds to one micro-batch's round trip: its activation forward, its gradient
// back, a latency each way. An unmeasured or unlimited direction adds nothing.
double round_trip_s(const Measurements& m, int r);

// The measurements at the drop to be ready for: the links at drop_bps and their stalls at
// drop_stall_s where those are given (a stall never below the one measured now).
Measurements at_drop(const Measurements& m);

}  // namespace contend::pipeline
