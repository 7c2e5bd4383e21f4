// "pairs": host 0 sends to host 1, host 2 to host 3, ...: point-to-point jobs (a parameter
// server and its worker, checkpoint copies), each pair's flow alone on its hosts' NICs.

#include "scenario/traffic/traffic.h"

namespace contend::emulator::detail {
namespace {

std::vector<std::pair<int, int>> pairs_flows(int hosts) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i + 1 < hosts; i += 2) {
    out.emplace_back(i, i + 1);
  }
  return out;
}

}  // namespace

TrafficItem pairs_traffic() {
  return {{"", "pairs", "each even-placed host sends to the next one", {}}, TrafficKind{2, true, pairs_flows}};
}

}  // namespace contend::emulator::detail
