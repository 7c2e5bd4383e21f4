#pragma once
// Private: each traffic shape's registration (its entry and flows), defined in its file:
// scenario/traffic/<key>.cpp; the table is scenario/traffic/registry.cpp.

#include "contend/emulator/scenario/traffic_registry.h"

namespace contend::emulator::detail {

TrafficItem pairs_traffic();
TrafficItem ring_traffic();
TrafficItem incast_traffic();
TrafficItem all_to_all_traffic();

}  // namespace contend::emulator::detail
