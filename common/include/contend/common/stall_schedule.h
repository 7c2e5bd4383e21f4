#pragma once
// StallSchedule: when one link stalls its messages, as PipeMorph injects stragglers (a wait before
// every ncclSend on a slow link, in both directions, so each message waits the stall and the
// link's messages go one after another). Two kinds of change, each holding until the next of its
// kind: at a time on the scenario's clock, and from an iteration of the workload on (PipeMorph's
// iteration-indexed traces); a message waits the larger of the two in force. Shared by the
// emulator (scenarios make them), the runtime (the transport waits them) and the simulator.
// Plain value; thread-safe to read.

#include <utility>
#include <vector>

namespace contend {

// The longest stall a scenario may ask for: far above any straggler (PipeMorph's reach 120 ms),
// and below the runtime's receive timeouts.
inline constexpr double kMaxStallS = 10.0;

class StallSchedule {
 public:
  struct Change {
    double at = 0;  // seconds on the scenario's clock, or an iteration
    double stall_s = 0;
  };

  // Changes are added in order of their time (or iteration); a later change at the same time
  // replaces the earlier one. Requires 0 <= stall_s <= kMaxStallS.
  void add_at_time(double time_s, double stall_s);
  void add_at_iteration(int iteration, double stall_s);

  // The stall in force for a message of `iteration` sent at `time_s`: 0 before any change.
  double at(double time_s, int iteration) const;
  // Whether it ever stalls.
  bool empty() const;
  const std::vector<Change>& by_time() const { return by_time_; }
  const std::vector<Change>& by_iteration() const { return by_iteration_; }

 private:
  std::vector<Change> by_time_;
  std::vector<Change> by_iteration_;
};

}  // namespace contend
