#include "shaping_watch.h"

#include <cmath>

#include "contend/common/units.h"

namespace contend::emulator {

namespace {

// Whether a class shows `set`: within 0.1% (the kernel keeps rates in bytes per second, and a
// discipline may round), and unchecked for a rate it cannot hold (unlimited).
bool shows(double rate_bps, double set) {
  return !std::isfinite(set) || std::abs(rate_bps - set) <= 1e-3 * set + 8;
}

}  // namespace

Result<void> ShapingWatch::check(const std::vector<LinkSample>& samples, double t_s) {
  std::map<Key, Seen> now;
  const std::map<std::string, double> moved = std::move(moved_);
  moved_.clear();
  const std::string when = "at " + format_seconds(t_s) + " of the scenario";
  for (const LinkSample& s : samples) {
    now[{s.link, s.node, s.stats.name}] = {s.stats.rate_bps, s.stats.setup};
    const auto set = moved.find(s.link);
    if (set != moved.end() && s.stats.link_level && !shows(s.stats.rate_bps, set->second)) {
      return make_error(Errc::kIo, "link " + s.link + ": class " + s.stats.name + " on node " + s.node + " shapes at " +
                                       format_rate(s.stats.rate_bps) + " " + when + ", not the " +
                                       format_rate(set->second) +
                                       " the scenario set: the network is not what the scenario says");
    }
  }
  if (!seen_) {
    seen_ = std::move(now);
    return {};
  }
  for (const auto& [key, was] : *seen_) {
    const auto& [link, node, name] = key;
    const auto found = now.find(key);
    if (found == now.end()) {
      return make_error(Errc::kIo, "link " + link + ": its shaping on node " + node + " (class " + name + ") is gone " +
                                       when +
                                       " (removed by something other than contend): the "
                                       "network is no longer what the scenario says");
    }
    if (moved.count(link) != 0) {
      continue;
    }
    const double rate = found->second.rate_bps;
    if (std::abs(rate - was.rate_bps) > 1e-6 * std::max(1.0, was.rate_bps)) {
      return make_error(Errc::kIo, "link " + link + ": class " + name + " on node " + node + " shapes at " +
                                       format_rate(rate) + " " + when + ", not the " + format_rate(was.rate_bps) +
                                       " contend set: the network is no longer what the scenario says");
    }
    if (found->second.setup != was.setup) {
      return make_error(Errc::kIo, "link " + link + ": the shaping of class " + name + " on node " + node +
                                       " changed " + when +
                                       " (its ceil or bursts, a qdisc or filter on its interface, or the interface "
                                       "taken down, by something other than contend): the network is no longer "
                                       "what the scenario says");
    }
  }
  for (const auto& [key, seen] : now) {
    (*seen_)[key] = seen;
  }
  return {};
}

}  // namespace contend::emulator
