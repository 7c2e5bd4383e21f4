#pragma once
// The shapes another tenant's traffic may take in a scenario's timeline ({"at": "0s", "traffic":
// {"pattern": "<key>", "hosts": N, ...}}, docs/scenario-format.md#traffic-patterns), in the one
// registry mechanism (common/registry.h): each item's entry is the shape's key and help, its kind
// which flows n placed hosts run, defined in scenario/traffic/<key>.cpp. One line per shape in
// scenario/traffic/registry.cpp. Thread-safe: the table is constant.

#include <utility>
#include <vector>

#include "contend/common/registry.h"

namespace contend::emulator {

struct TrafficKind {
  int min_hosts = 2;
  bool even_hosts = false;  // the hosts pair up
  // The flows among `hosts` placed hosts, each (from, to) as indices in placement order: host 0
  // is the first the list or rule gives.
  std::vector<std::pair<int, int>> (*flows)(int hosts) = nullptr;
};

using TrafficItem = Registry<TrafficKind>::Item;

// Every registered shape, in table order.
const Registry<TrafficKind>& traffic_patterns();

}  // namespace contend::emulator
