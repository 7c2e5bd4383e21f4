// "leaf-spine": {"leaves", "hosts_per_leaf", "spines", "host_rate", "uplink_rate"}: hosts h0.. on
// leaves leaf0.., every leaf joined to every spine spine0..; a leaf's oversubscription is
// hosts_per_leaf x host_rate / (spines x uplink_rate).

#include "scenario/fabrics/fabric.h"

namespace contend::emulator::detail {
namespace {

Result<FabricModel> expand_leaf_spine(const JsonReader& p) {
  if (auto ok = p.check_keys({"leaves", "hosts_per_leaf", "spines", "host_rate", "uplink_rate"}); !ok) {
    return ok.error();
  }
  auto leaves = fabric_count(p, "leaves", 1, static_cast<int>(kMaxFabricSwitches));
  auto per_leaf = fabric_count(p, "hosts_per_leaf", 1, static_cast<int>(kMaxFabricHosts));
  auto spines = fabric_count(p, "spines", 0, static_cast<int>(kMaxFabricSwitches));
  auto host_rate = fabric_rate(p, "host_rate");
  auto uplink_rate = fabric_rate(p, "uplink_rate", "host_rate");
  if (auto e = first_error(leaves, per_leaf, spines, host_rate, uplink_rate)) {
    return *e;
  }
  if (*leaves > 1 && *spines == 0) {
    return p.error_at("spines",
                      "expected at least 1 spine: hosts on different leaves reach each other only through one");
  }
  if (*leaves * *per_leaf < 2) {
    return p.error_at("hosts_per_leaf", "expected at least 2 hosts in all");
  }
  if (auto ok = fabric_size(p, static_cast<long long>(*leaves) * *per_leaf, *leaves + *spines); !ok) {
    return ok.error();
  }
  FabricBuilder b;
  for (int s = 0; s < *spines; ++s) {
    b.add_switch("spine" + std::to_string(s));
  }
  for (int l = 0; l < *leaves; ++l) {
    const std::string leaf = b.add_switch("leaf" + std::to_string(l));
    for (int h = 0; h < *per_leaf; ++h) {
      b.link(b.host("h" + std::to_string(l * *per_leaf + h)), leaf, *host_rate);
    }
    for (int s = 0; s < *spines; ++s) {
      b.link(leaf, "spine" + std::to_string(s), *uplink_rate);
    }
  }
  return b.finish();
}

}  // namespace

FabricItem leaf_spine_fabric() {
  return {{"", "leaf-spine", "hosts on leaves, every leaf joined to every spine", {}}, FabricKind{expand_leaf_spine}};
}

}  // namespace contend::emulator::detail
