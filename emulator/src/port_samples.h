#pragma once
// Private: a fabric's samples in the events log, compact enough for hundreds of ports at the
// play's period (a line per shaped end and class would be about 65 MB a minute for a 64-host
// leaf-spine). The first sample writes a `port_index` line naming every port (a shaped end: link
// and node) once; every sample then writes one `ports` line: per port, in that order, the KiB it
// sent and the packets it dropped since the previous sample, and the KiB its queues held at the
// sample (rounded up: a packet queued shows) (docs/scenario-format.md, the event log). Not
// thread-safe: the player's thread alone uses it.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "contend/emulator/net/network.h"

namespace contend::emulator {

class PortSamples {
 public:
  // The lines for `samples` taken at `t_s`: the index first (once), then the `ports` line.
  std::vector<nlohmann::ordered_json> lines(double t_s, const std::vector<LinkSample>& samples);

 private:
  using Port = std::pair<std::string, std::string>;  // (link, node)
  struct Counters {
    std::uint64_t kib = 0;  // whole KiB sent (the link-level class's bytes / 1024)
    std::uint64_t drops = 0;
    std::uint64_t queued = 0;  // bytes, at the sample
  };
  std::vector<Port> index_;  // as written in the port_index line
  std::vector<Counters> last_;
};

}  // namespace contend::emulator
