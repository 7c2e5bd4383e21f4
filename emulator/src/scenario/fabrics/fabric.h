#pragma once
// Private: what a fabric generator (fabrics/<key>.cpp) builds with, and its line in the registry
// (fabrics/registry.cpp).

#include <string>

#include "contend/emulator/scenario/fabric_registry.h"

namespace contend::emulator::detail {

// A model under construction: hosts, switches and links named as every generator names them
// ("<from>-<to>"), each link shaped at its rate in both directions (parse_fabric sets the
// discipline: the parameter "qdisc", or a link's default).
class FabricBuilder {
 public:
  const std::string& host(const std::string& name);
  const std::string& add_switch(const std::string& name);
  void link(const std::string& from, const std::string& to, double rate_bps);
  FabricModel finish() { return std::move(model_); }

 private:
  FabricModel model_;
};

// An error at `params` when a fabric of `hosts` and `switches` is more than a fabric may be
// (kMaxFabricHosts, kMaxFabricSwitches): generators ask before they build. What one machine
// builds (kMaxHosts) is checked at `emu up` (topology.h, fits_one_machine).
Result<void> fabric_size(const JsonReader& params, long long hosts, long long switches);
// The integer at `key` (or `fallback` when it is absent and fallback >= 0), from `least` to
// `most`.
Result<int> fabric_count(const JsonReader& params, const std::string& key, int least, int most, int fallback = -1);
// The rate at `key`, or at `fallback_key` when `key` is absent and fallback_key is not empty.
Result<double> fabric_rate(const JsonReader& params, const std::string& key, const std::string& fallback_key = "");

// Each kind's registration, defined in its file: scenario/fabrics/<key>.cpp.
FabricItem leaf_spine_fabric();
FabricItem fat_tree_fabric();
FabricItem rail_fabric();

}  // namespace contend::emulator::detail
