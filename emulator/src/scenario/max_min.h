#pragma once
// Private: max-min fair shares of ports among streams (progressive filling), from scratch or
// from the shares of a moment before, when some streams came and went.

#include <cstddef>
#include <limits>
#include <vector>

namespace contend::emulator::detail {

constexpr std::size_t kNoPort = std::numeric_limits<std::size_t>::max();

struct Stream {
  std::size_t flow;                       // the caller's
  const std::vector<std::size_t>* ports;  // its path (port numbers), held by the caller
  double cap_bps;                         // its pacing share, or +infinity
  // Its share a moment before and the port that held it then (none: its cap), with the ports'
  // capacities unchanged since; -1: a stream that was not there then.
  double before_bps = -1;
  std::size_t before_bottleneck = kNoPort;
  double rate_bps = 0;
  bool frozen = false;
  // The port that holds it (a full port where no stream has more: the lowest-numbered of several
  // when shared afresh; a held stream keeps the one it had while that still holds it); none: its cap.
  std::size_t bottleneck = kNoPort;
};

// What changed since the shares before: nothing is known (every stream shared afresh), or the
// streams without a share before came, and streams that crossed `gone_ports` went.
struct Change {
  bool afresh = true;
  std::vector<std::size_t> gone_ports;
};

// The working memory of share_max_min, kept from one call to the next (a replay's thousands of
// calls reuse its arrays by port and by stream); its contents are share_max_min's, but for `held`:
// how many streams all calls held at their shares from before.
struct SharingSpace {
  long held = 0;
  std::vector<double> room, load, most;
  std::vector<int> active;
  std::vector<std::size_t> first, filled, on;
  std::vector<long> mark;
  long round = 0;
  std::vector<char> shared;
};

// Every stream's max-min fair rate over ports of `capacity` (by port number; +infinity: not
// shaped), and its bottleneck. After a change, only the streams whose shares no longer hold are
// shared again: a stream holds while a full port it crosses gives no other stream more (or it is
// at its cap), which makes the shares max-min fair; the new streams, and each stream that no
// longer holds, are shared again over what the others leave, until every stream holds.
void share_max_min(std::vector<Stream>& streams, const std::vector<double>& capacity, const Change& change,
                   SharingSpace& space);

}  // namespace contend::emulator::detail
