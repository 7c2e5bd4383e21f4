#include "shaping_watch.h"

#include <cmath>

#include "contend/common/units.h"

namespace contend::emulator {

Result<void> ShapingWatch::check(const std::vector<LinkSample>& samples, double t_s) {
  std::map<Key, double> now;
  for (const LinkSample& s : samples) {
    now[{s.link, s.node, s.stats.name}] = s.stats.rate_bps;
  }
  const std::set<std::string> moved = std::move(moved_);
  moved_.clear();
  if (!seen_) {
    seen_ = std::move(now);
    return {};
  }
  const std::string when = "at " + format_seconds(t_s) + " of the scenario";
  for (const auto& [key, rate] : *seen_) {
    const auto& [link, node, name] = key;
    const auto found = now.find(key);
    if (found == now.end()) {
      return make_error(Errc::kIo, "link " + link + ": its shaping on node " + node + " (class " + name + ") is gone " +
                                       when +
                                       " (removed by something other than contend): the "
                                       "network is no longer what the scenario says");
    }
    if (moved.count(link) == 0 && std::abs(found->second - rate) > 1e-6 * std::max(1.0, rate)) {
      return make_error(Errc::kIo, "link " + link + ": class " + name + " on node " + node + " shapes at " +
                                       format_rate(found->second) + " " + when + ", not the " + format_rate(rate) +
                                       " contend set: the network is no longer what the scenario says");
    }
  }
  for (const auto& [key, rate] : now) {
    (*seen_)[key] = rate;
  }
  return {};
}

}  // namespace contend::emulator
