#pragma once
// The scenario model: nodes, links with their shaping, and the expanded timeline of what happens
// to them. Parsed from JSON (schema contend.scenario/1, docs/scenario-format.md) by
// parse_scenario(); patterns (periodic, random, ramp, trace, loop) are expanded there into plain
// timed events, so the player only applies a sorted list. Plain values; thread-safe to read.

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/scenario/events.h"

namespace contend::emulator {

// Who yields when workload and background traffic share a link (disciplines with preemption
// classes).
enum class Preemption {
  kBackgroundFirst,  // background class at prio 0 takes all it can; workload gets the rest
  kFair,             // both guaranteed half, either may borrow the other's idle half
  kSplit,            // fixed guaranteed split, no borrowing: workload_share for the workload
};
// The names scenario files give them ("preemption"), in the enum's order.
inline constexpr std::array<const char*, 3> kPreemptionNames = {"background-first", "fair", "split"};
inline const char* preemption_name(Preemption p) {
  return kPreemptionNames[static_cast<std::size_t>(p)];
}
// Which directions a link's rate shapes: both ends' egress, or only from->to / to->from.
enum class Direction { kBoth, kForward, kBackward };

struct LinkSpec {
  std::string name;
  std::string from;
  std::string to;
  double rate_bps = 0;                // base rate, each shaped direction
  std::chrono::nanoseconds delay{0};  // one-way, needs netem
  double loss_fraction = 0;           // 0..1, needs netem
  Direction direction = Direction::kBoth;
  std::string qdisc = "htb";  // the shaping discipline: a name in discipline_registry.h
  Preemption preemption = Preemption::kBackgroundFirst;
  double workload_share = 0.5;  // kSplit only: fraction of the rate kept for the workload
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // the file it came from
  double duration_s = 0;
  std::uint64_t seed = 1;
  std::vector<std::string> nodes;     // the hosts: where workloads and flows run, in rank order
  std::vector<std::string> switches;  // a fabric's forwarding namespaces (empty: links join hosts only)
  std::string fabric;                 // the generator that wrote nodes, switches and links; empty when the file did
  std::vector<LinkSpec> links;        // each joins two of nodes and switches
  // On a fabric, how many of nodes (the first) a workload's ranks run on, rank r on nodes[r]:
  // its placement's (docs/scenario-format.md#placement; an experiment narrows it to its stages).
  std::size_t placed = 0;
  std::vector<Event> events;  // sorted by at_s (stable: equal times keep file order), all < duration
  // Stalls indexed by the workload's iteration (PipeMorph's traces: SetStall with at_iteration
  // >= 0), sorted by it: no clock plays them; the runtime applies each from its iteration on.
  std::vector<Event> iteration_events;

  const LinkSpec* find_link(const std::string& name) const;
  int node_index(const std::string& name) const;  // -1 when unknown
  bool is_switch(const std::string& name) const;
  // Whether packets are routed through switches (docs/scenario-format.md#fabrics).
  bool has_fabric() const { return !switches.empty(); }
  // The hosts a workload's ranks run on (nodes[0..rank_hosts())): the placed ones on a fabric,
  // every node elsewhere.
  std::size_t rank_hosts() const { return has_fabric() ? placed : nodes.size(); }
  // True when any link asks for delay or loss (so netem must be there).
  bool needs_netem() const;
  // Whether any link ever stalls.
  bool has_stalls() const;
  std::size_t flow_events() const;
  // The first flow of a closed-loop job ("iterate"): its traffic follows its own iterations,
  // which only a real play times; "" when every flow is a stream.
  std::string closed_loop_flow() const;
};

// What a scenario may ask for (docs/scenario-format.md#limits), checked when it is parsed, so a
// small file never grows to gigabytes: the events its timeline expands to (rate changes, flow
// starts and stops; each loop pass counts as one: an event takes about 250 bytes), and the
// shortest period, gap or on/off time of a pattern (the player applies events about 0.3 ms late,
// so shorter ones would not be played as written). The file itself is held to what every JSON
// file is (common/json.h: kMaxJsonBytes and the rest).
inline constexpr std::size_t kMaxScenarioEvents = 250'000;
inline constexpr std::chrono::nanoseconds kMinPatternPeriod = std::chrono::milliseconds(1);
// Hosts and switches one machine holds as namespaces (each host also has a port on the control
// bridge, 198.18.255.0/24): what a file may list, and what `emu up` builds.
inline constexpr std::size_t kMaxHosts = 250;
inline constexpr std::size_t kMaxSwitches = 250;
// A generated fabric may be larger, for `contend emu predict` alone (fabric_flows.h).
inline constexpr std::size_t kMaxFabricHosts = 16384;
inline constexpr std::size_t kMaxFabricSwitches = 4096;

// Reads a file named in a scenario (a trace), relative paths resolved by the caller.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// Parses and expands a scenario. `source` names the file in errors and is the base for relative
// trace paths; `read` loads trace files (tests pass an in-memory one). Errors are kParse with the
// file, JSON pointer and expectation: `s.json: /timeline/3/rate: expected a rate like "500Mbit",
// got "fast"`; unknown keys are errors.
Result<Scenario> parse_scenario(const std::string& text, const std::string& source, const FileReader& read);

// Hops from `start` to each node and switch it reaches (by name; unreachable ones are absent),
// along paths whose inner nodes are switches (hosts send and receive, only switches forward) and
// whose links are not in `down`.
std::map<std::string, int> hops_from(const Scenario& s, const std::string& start,
                                     const std::set<std::string>& down = {});

// The switch `host`'s first link joins: its leaf, or rack ("" when it joins none).
std::string leaf_of(const Scenario& s, const std::string& host);
// `hosts` grouped by their leaf, the groups in the order of their first host.
std::vector<std::vector<std::string>> hosts_by_leaf(const Scenario& s, const std::vector<std::string>& hosts);
// Each host a flow of `events` starts or ends on, with the first such flow's start (a pointer into
// `events`): another tenant's hosts, which placement rules leave out.
std::map<std::string, const Event*> flow_ends(const std::vector<Event>& events);

// Reads `path` (read_json_text: at most kMaxJsonBytes) and parses it, reading traces from the file
// system.
Result<Scenario> load_scenario(const std::string& path);

}  // namespace contend::emulator
