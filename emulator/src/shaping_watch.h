#pragma once
// Private: what the player checks of the network at every sample: that the shaping it installed
// is still there as it set it. Every class it saw must still be there, and its rate and setup
// (ClassStats::setup: ceil, bursts, the qdiscs and filters of its interface, its up state) may
// change only in the sample after the player changed that link, when the link's own class (the
// one at the whole link's rate) must show the rate it set; anything else (a class deleted, a root
// qdisc replaced, a filter or a qdisc added, a burst raised, the interface taken down, a rate
// changed by someone else or not to what was asked) means the network is no longer what the
// scenario says, and the play fails naming it. Not thread-safe: the player's loop.

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/network.h"

namespace contend::emulator {

class ShapingWatch {
 public:
  // The player set `link`'s rate to `rate_bps`: its classes may change by the next sample, and
  // its link-level classes must then be at that rate.
  void rate_set(const std::string& link, double rate_bps) { moved_[link] = rate_bps; }
  // The player took `link` down or up: its classes' setup may change by the next sample.
  void state_set(const std::string& link) { moved_.try_emplace(link, std::numeric_limits<double>::infinity()); }
  // Checks a sample taken at `t_s` against the ones before; the first sample sets what is expected.
  Result<void> check(const std::vector<LinkSample>& samples, double t_s);

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // link, node, class
  struct Seen {
    double rate_bps;
    std::uint64_t setup;
  };
  std::optional<std::map<Key, Seen>> seen_;  // what each class showed
  std::map<std::string, double> moved_;      // links set since the last sample: their rate (inf: any)
};

}  // namespace contend::emulator
