// "all-to-all": every host sends to every other at once (a mixture-of-experts' token exchange,
// a shuffle): n (n - 1) flows.

#include "scenario/traffic/traffic.h"

namespace contend::emulator::detail {
namespace {

std::vector<std::pair<int, int>> all_to_all_flows(int hosts) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < hosts; ++i) {
    for (int j = 0; j < hosts; ++j) {
      if (i != j) {
        out.emplace_back(i, j);
      }
    }
  }
  return out;
}

}  // namespace

TrafficItem all_to_all_traffic() {
  return {{"", "all-to-all", "every host sends to every other", {}}, TrafficKind{2, false, all_to_all_flows}};
}

}  // namespace contend::emulator::detail
