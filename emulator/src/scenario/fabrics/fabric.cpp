#include "scenario/fabrics/fabric.h"

#include "contend/common/units.h"

namespace contend::emulator::detail {

const std::string& FabricBuilder::host(const std::string& name) {
  model_.hosts.push_back(name);
  return model_.hosts.back();
}

const std::string& FabricBuilder::add_switch(const std::string& name) {
  model_.switches.push_back(name);
  return model_.switches.back();
}

void FabricBuilder::link(const std::string& from, const std::string& to, double rate_bps) {
  LinkSpec l;
  l.name = from + "-" + to;
  l.from = from;
  l.to = to;
  l.rate_bps = rate_bps;
  model_.links.push_back(std::move(l));
}

Result<void> fabric_size(const JsonReader& params, long long hosts, long long switches) {
  if (hosts > static_cast<long long>(kMaxFabricHosts) || switches > static_cast<long long>(kMaxFabricSwitches)) {
    return params.error("makes " + std::to_string(hosts) + " hosts and " + std::to_string(switches) +
                        " switches; a fabric holds at most " + std::to_string(kMaxFabricHosts) + " hosts and " +
                        std::to_string(kMaxFabricSwitches) + " switches");
  }
  return {};
}

Result<int> fabric_count(const JsonReader& params, const std::string& key, int least, int most, int fallback) {
  auto n = params.optional_integer(key);
  if (!n) {
    return n.error();
  }
  if (!*n && fallback < 0) {
    return params.error_at(
        key, "missing; expected a whole number from " + std::to_string(least) + " to " + std::to_string(most));
  }
  const std::int64_t v = n->value_or(fallback);
  if (v < least || v > most) {
    return params.error_at(key, "expected a whole number from " + std::to_string(least) + " to " +
                                    std::to_string(most) + ", got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

Result<double> fabric_rate(const JsonReader& params, const std::string& key, const std::string& fallback_key) {
  const std::string& used = params.has(key) || fallback_key.empty() ? key : fallback_key;
  auto rate = params.rate_bps(used);
  if (rate && *rate <= 0) {
    return params.error_at(used, "expected a positive rate, got 0");
  }
  return rate;
}

}  // namespace contend::emulator::detail
