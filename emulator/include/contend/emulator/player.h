#pragma once
// The scenario player: applies each event at its time on a monotonic clock and writes the ground
// truth of the run as JSON lines (schema contend.events/1, docs/scenario-format.md): every
// applied event with its scheduled and actual time, and every `sample_period` (a whole multiple
// of it where a round of samples would take more than a tenth of a CPU) the counters of every
// shaped class (the monitor). Single-threaded: sampling and events share one loop, so the
// netlink sockets are never used from two threads.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "contend/common/records.h"
#include "contend/common/result.h"
#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

// The ground truth of a play as JSON lines; each line a complete document starting with its
// schema. Thread-safe (JsonLinesWriter's mutex).
class EventLog {
 public:
  // Creates `path` exclusively and never through a link (JsonLinesWriter::Mode::kCreate: a log is
  // never overwritten, a planted link never followed); "-" writes to stdout. kInvalidArgument
  // "event log P exists already ..." when the path (or a link) is there; other errors name it.
  static Result<EventLog> open(const std::string& path);
  // Writes one line: {"schema": "contend.events/1", <fields of `line`>}. A failed write is
  // dropped (the play goes on); the first one is kept for error().
  void write(const nlohmann::ordered_json& line);
  // The first write that failed, if any.
  std::optional<Error> error() const;

 private:
  explicit EventLog(std::unique_ptr<JsonLinesWriter> writer) : writer_(std::move(writer)) {}
  std::unique_ptr<JsonLinesWriter> writer_;
  std::unique_ptr<std::mutex> error_mutex_ = std::make_unique<std::mutex>();  // movable
  std::optional<Error> error_;
};

// How late a play may apply an event before the network it makes is no longer the scenario's
// (the player applies them about 0.3 ms late on an idle machine, and was seen 113 ms late on two
// cores beside a CPU-bound process: a bound load cannot cross, that a stopped player does).
inline constexpr std::chrono::milliseconds kMaxEventLateness{500};

struct PlayerOptions {
  std::chrono::milliseconds sample_period{100};  // monitor period (at least); 0 disables sampling
  bool quiet = false;                            // no progress lines on stderr
  // The scenario's time 0 on the monotonic clock (the runner hands the same to the oracle);
  // unset: when the play starts.
  std::optional<std::chrono::steady_clock::time_point> zero{};
  std::chrono::milliseconds max_lateness = kMaxEventLateness;  // an event applied later is an error
};

struct PlayReport {
  std::size_t applied = 0;        // rate changes applied
  std::size_t flow_events = 0;    // flow starts and stops applied
  std::size_t skipped_flows = 0;  // flow events logged but not run (no flow engine)
  double max_lateness_s = 0;      // worst applied - scheduled
  bool stopped = false;           // `stop` ended it early
};

// Plays `scenario` for its duration against `net`, logging to `log`. Returns early (stopped =
// true) when `stop` becomes true. Flow events start and stop flows on `flows`, whose counters are
// sampled with the links' ("flow_sample" lines, with the rate since the previous sample); without
// an engine they are logged with "status": "skipped", and in hosts mode those whose source is on
// another host with "status": "elsewhere". Every flow is stopped at the end, and a "flow_summary"
// line per flow says what it achieved. A flow that cannot start is an error, and so is a log that
// could not be written (after the play, which goes on without it). So is a network that is no
// longer what the scenario says: an event applied later than `max_lateness` (a paused player, a
// stalled machine), or shaping that changed behind the player's back (a class gone, a rate it did
// not set: ShapingWatch), checked at every sample and once more when the play is stopped; a play
// stopped while an event is overdue by more than `max_lateness` (its time passed while the player
// did not run: the runner stopped) is one too, though that event was never applied. The one event loop:
// `contend emu play`, `contend emu host`, the runner's cells and `contend flows` (a flow job as a
// scenario, with NoLinks) all play through it.
Result<PlayReport> play(const Scenario& scenario, LinkControl& net, EventLog& log, const std::atomic<bool>& stop,
                        const PlayerOptions& options, FlowEngine* flows = nullptr);

}  // namespace contend::emulator
