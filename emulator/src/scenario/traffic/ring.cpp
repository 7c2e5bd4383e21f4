// "ring": host i sends to host i+1, the last to the first: a ring all-reduce's steady traffic
// (every host sends and receives one stream at once, as NCCL's and Gloo's rings do).

#include "scenario/traffic/traffic.h"

namespace contend::emulator::detail {
namespace {

std::vector<std::pair<int, int>> ring_flows(int hosts) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < hosts; ++i) {
    out.emplace_back(i, (i + 1) % hosts);
  }
  return out;
}

}  // namespace

TrafficItem ring_traffic() {
  return {{"", "ring", "each host sends to the next, the last to the first (a ring all-reduce)", {}},
          TrafficKind{2, false, ring_flows}};
}

}  // namespace contend::emulator::detail
