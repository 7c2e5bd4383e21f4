// "fat-tree": {"k", "tiers", "rate"}: Al-Fares' k-ary fat-tree of k-port switches, every link at
// `rate`. Three tiers (the default): k pods of k/2 edge (e<pod>_<i>) and k/2 aggregation
// (a<pod>_<i>) switches, (k/2)^2 cores (c<i>), k^3/4 hosts. Two tiers: k leaves (leaf<i>) of k/2
// hosts each, every leaf joined to k/2 spines (spine<i>), k^2/2 hosts. Both are non-blocking.

#include "scenario/fabrics/fabric.h"

namespace contend::emulator::detail {
namespace {

std::string numbered(const std::string& prefix, int i) {
  return prefix + std::to_string(i);
}

FabricBuilder two_tiers(int k, double rate) {
  FabricBuilder b;
  for (int s = 0; s < k / 2; ++s) {
    b.add_switch(numbered("spine", s));
  }
  for (int l = 0; l < k; ++l) {
    const std::string leaf = b.add_switch(numbered("leaf", l));
    for (int h = 0; h < k / 2; ++h) {
      b.link(b.host(numbered("h", l * (k / 2) + h)), leaf, rate);
    }
    for (int s = 0; s < k / 2; ++s) {
      b.link(leaf, numbered("spine", s), rate);
    }
  }
  return b;
}

FabricBuilder three_tiers(int k, double rate) {
  const int half = k / 2;
  FabricBuilder b;
  for (int c = 0; c < half * half; ++c) {
    b.add_switch(numbered("c", c));
  }
  for (int pod = 0; pod < k; ++pod) {
    const std::string at = std::to_string(pod) + "_";
    for (int a = 0; a < half; ++a) {
      const std::string agg = b.add_switch("a" + at + std::to_string(a));
      for (int c = 0; c < half; ++c) {
        b.link(agg, numbered("c", a * half + c), rate);
      }
    }
    for (int e = 0; e < half; ++e) {
      const std::string edge = b.add_switch("e" + at + std::to_string(e));
      for (int h = 0; h < half; ++h) {
        b.link(b.host(numbered("h", (pod * half + e) * half + h)), edge, rate);
      }
      for (int a = 0; a < half; ++a) {
        b.link(edge, "a" + at + std::to_string(a), rate);
      }
    }
  }
  return b;
}

Result<FabricModel> expand_fat_tree(const JsonReader& p) {
  if (auto ok = p.check_keys({"k", "tiers", "rate"}); !ok) {
    return ok.error();
  }
  auto k = fabric_count(p, "k", 2, 64);
  auto tiers = fabric_count(p, "tiers", 2, 3, 3);
  auto rate = fabric_rate(p, "rate");
  if (auto e = first_error(k, tiers, rate)) {
    return *e;
  }
  if (*k % 2 != 0) {
    return p.error_at("k", "expected an even number of switch ports, got " + std::to_string(*k));
  }
  const long long ports = *k;
  const bool two = *tiers == 2;
  if (auto ok = fabric_size(p, two ? ports * ports / 2 : ports * ports * ports / 4,
                            two ? ports + ports / 2 : 5 * ports * ports / 4);
      !ok) {
    return ok.error();
  }
  return (two ? two_tiers(*k, *rate) : three_tiers(*k, *rate)).finish();
}

}  // namespace

FabricItem fat_tree_fabric() {
  return {{"", "fat-tree", "a k-ary fat-tree of k-port switches, two or three tiers", {}}, FabricKind{expand_fat_tree}};
}

}  // namespace contend::emulator::detail
