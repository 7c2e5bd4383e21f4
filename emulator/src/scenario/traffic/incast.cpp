// "incast": every host sends to the first one at once: a parameter server's gather, or the
// workers of a reduce answering one host; all of them meet at its port.

#include "scenario/traffic/traffic.h"

namespace contend::emulator::detail {
namespace {

std::vector<std::pair<int, int>> incast_flows(int hosts) {
  std::vector<std::pair<int, int>> out;
  for (int i = 1; i < hosts; ++i) {
    out.emplace_back(i, 0);
  }
  return out;
}

}  // namespace

TrafficItem incast_traffic() {
  return {{"", "incast", "every other host sends to the first", {}}, TrafficKind{2, false, incast_flows}};
}

}  // namespace contend::emulator::detail
