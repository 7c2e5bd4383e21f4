// "rail-optimized": {"hosts", "rails", "rate", "spines", "uplink_rate"}: every host h<i> has one
// NIC per rail, NIC r joined to rail switch rail<r>, so traffic between the same rail of two hosts
// crosses one switch; with spines, every rail switch is joined to every spine (spine<i>).

#include "scenario/fabrics/fabric.h"

namespace contend::emulator::detail {
namespace {

Result<FabricModel> expand_rail(const JsonReader& p) {
  if (auto ok = p.check_keys({"hosts", "rails", "rate", "spines", "uplink_rate"}); !ok) {
    return ok.error();
  }
  auto hosts = fabric_count(p, "hosts", 2, static_cast<int>(kMaxFabricHosts));
  auto rails = fabric_count(p, "rails", 1, 16);
  auto spines = fabric_count(p, "spines", 0, static_cast<int>(kMaxFabricSwitches), 0);
  auto rate = fabric_rate(p, "rate");
  auto uplink_rate = fabric_rate(p, "uplink_rate", "rate");
  if (auto e = first_error(hosts, rails, spines, rate, uplink_rate)) {
    return *e;
  }
  if (auto ok = fabric_size(p, *hosts, *rails + *spines); !ok) {
    return ok.error();
  }
  FabricBuilder b;
  for (int s = 0; s < *spines; ++s) {
    b.add_switch("spine" + std::to_string(s));
  }
  for (int r = 0; r < *rails; ++r) {
    const std::string rail = b.add_switch("rail" + std::to_string(r));
    for (int s = 0; s < *spines; ++s) {
      b.link(rail, "spine" + std::to_string(s), *uplink_rate);
    }
  }
  for (int h = 0; h < *hosts; ++h) {
    const std::string host = b.host("h" + std::to_string(h));
    for (int r = 0; r < *rails; ++r) {
      b.link(host, "rail" + std::to_string(r), *rate);
    }
  }
  return b.finish();
}

}  // namespace

FabricItem rail_fabric() {
  return {{"", "rail-optimized", "one NIC per rail on every host, one switch per rail", {}}, FabricKind{expand_rail}};
}

}  // namespace contend::emulator::detail
