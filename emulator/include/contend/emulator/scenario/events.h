#pragma once
// A scenario's events: what happens to its network at a time (or from an iteration of the
// workload on). The kinds are a closed set, EventAction: every reader that acts on each kind (the
// player, the workload's network, the fidelity code) visits them all with std::visit
// (common/overloaded.h), so a kind added here fails to compile until each of them handles it
// (docs/extending.md, "An event kind"); a reader that asks after one kind alone (a flow's start,
// a stall) uses get_if and is left as it is. Each kind says here how it is named and written in
// the events log (kName, kHelp, fields()). Plain values; thread-safe to read.

#include <array>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

namespace contend::emulator {

enum class Protocol { kTcp, kUdp };
inline const char* protocol_name(Protocol p) {
  return p == Protocol::kTcp ? "tcp" : "udp";
}

// A flow's "message_size" (bytes per write) is 1 byte to this; TCP writes at most 256 KiB at
// once from one reused buffer, UDP at most 1472 bytes per datagram.
inline constexpr std::uint64_t kMaxMessageBytes = 64u << 20;
inline constexpr std::uint64_t kDefaultMessageBytes = 128u << 10;
// A closed-loop flow's bytes per iteration ("iterate"): 1 byte to this.
inline constexpr std::uint64_t kMaxIterateBytes = 64ull << 30;
// A flow's "rate" (its pacing, over all streams), when not "unlimited": the range contend shapes
// links in (discipline_registry.h).
inline constexpr double kMinFlowRateBps = 8e3;
inline constexpr double kMaxFlowRateBps = 4e12;

struct FlowSpec {
  std::string name;
  std::string from;
  std::string to;
  Protocol protocol = Protocol::kTcp;
  int streams = 1;
  double rate_bps = 0;                                 // 0: unlimited (TCP takes what it can)
  std::string congestion = "cubic";                    // TCP_CONGESTION for TCP flows
  std::uint64_t message_bytes = kDefaultMessageBytes;  // 1..kMaxMessageBytes
  // A closed-loop job's flow ("iterate", docs/scenario-format.md#closed-loop-traffic): each
  // iteration it computes for iterate_compute_s, sends iterate_bytes, and waits until every flow
  // of its job (`job`, `job_flows` of them: a traffic entry's flows, or this flow alone) delivered
  // theirs. 0 bytes: open loop, a stream for as long as the flow is on. With a period, each
  // iteration after the first begins at the job's next slot (its start plus a whole number of
  // periods) once the one before ended, as a scheduler that shifts jobs in time keeps them.
  std::uint64_t iterate_bytes = 0;
  double iterate_compute_s = 0;
  double iterate_period_s = 0;  // 0: none, each iteration begins when the one before ended
  std::string job;
  int job_flows = 1;
};

// A slotted job's first slot at or after `now_s`: its start `origin_s` plus a whole number of
// `period_s` (FlowSpec::iterate_period_s).
inline double next_job_slot_s(double origin_s, double now_s, double period_s) {
  const double slots = std::ceil((now_s - origin_s) / period_s - 1e-9);
  return origin_s + (slots > 0 ? slots : 0.0) * period_s;
}

// The link's available rate for the workload (its shaping) set to `rate_bps`.
struct SetRate {
  static constexpr const char* kName = "rate";
  static constexpr const char* kHelp = "the link's rate for the workload from then on (its shaping changed in place)";
  std::string link;
  double rate_bps = 0;
  void fields(nlohmann::ordered_json& out) const {
    out["link"] = link;
    out["rate_bps"] = rate_bps;
  }
};

// A stall: every message on the link, in both directions, waits `stall_s` before it is sent, one
// after another, as PipeMorph injects stragglers before each ncclSend; 0 ends it. The runtime's
// transport and the simulator apply it (a kernel's qdisc cannot: netem's delay pipelines, a stall
// serialises), the player logs it. From the workload's iteration `at_iteration` on when it is >= 0
// (Scenario::iteration_events), else at the event's time.
struct SetStall {
  static constexpr const char* kName = "stall";
  static constexpr const char* kHelp =
      "every message on the link waits this long before it is sent (the workers apply it)";
  std::string link;
  double stall_s = 0;
  int at_iteration = -1;
  void fields(nlohmann::ordered_json& out) const {
    out["link"] = link;
    out["stall_s"] = stall_s;
    if (at_iteration >= 0) {
      out["iteration"] = at_iteration;
    }
  }
};

// The flow's fields in the events log.
inline void flow_fields(const FlowSpec& flow, nlohmann::ordered_json& out) {
  out["flow"] = flow.name;
  out["from"] = flow.from;
  out["to"] = flow.to;
  out["protocol"] = protocol_name(flow.protocol);
  out["streams"] = flow.streams;
  out["rate_bps"] = flow.rate_bps;
  if (flow.iterate_bytes > 0) {
    out["iterate"] = {{"job", flow.job}, {"bytes", flow.iterate_bytes}, {"compute_s", flow.iterate_compute_s}};
    if (flow.iterate_period_s > 0) {
      out["iterate"]["period_s"] = flow.iterate_period_s;
    }
  }
}

// A background flow started, or stopped.
struct FlowStart {
  static constexpr const char* kName = "flow_start";
  static constexpr const char* kHelp = "a background flow starts between two nodes";
  FlowSpec flow;
  void fields(nlohmann::ordered_json& out) const { flow_fields(flow, out); }
};
struct FlowStop {
  static constexpr const char* kName = "flow_stop";
  static constexpr const char* kHelp = "a background flow stops";
  FlowSpec flow;
  void fields(nlohmann::ordered_json& out) const { flow_fields(flow, out); }
};

// The link goes down (both ends' interfaces) or comes back up; on a fabric the routes are computed
// again without the links that are down and replaced in every namespace, so flows move to the
// paths left (as a routing protocol would withdraw them).
struct SetLinkState {
  static constexpr const char* kName = "link_state";
  static constexpr const char* kHelp = "the link goes down or comes back up; a fabric reroutes around it";
  std::string link;
  bool up = true;
  void fields(nlohmann::ordered_json& out) const {
    out["link"] = link;
    out["state"] = up ? "up" : "down";
  }
};

using EventAction = std::variant<SetRate, SetStall, FlowStart, FlowStop, SetLinkState>;

// The name of `action`'s kind in the events log, the docs and `contend list`.
inline const char* event_kind_name(const EventAction& action) {
  return std::visit([](const auto& a) { return a.kName; }, action);
}

// Every kind's name and help, in EventAction's order.
struct EventKindInfo {
  const char* name;
  const char* help;
};
template <typename... Kinds>
constexpr std::array<EventKindInfo, sizeof...(Kinds)> event_kinds_of(const std::variant<Kinds...>*) {
  return {EventKindInfo{Kinds::kName, Kinds::kHelp}...};
}
inline constexpr auto kEventKinds = event_kinds_of(static_cast<const EventAction*>(nullptr));

struct Event {
  double at_s = 0;
  EventAction action;
  std::string origin;  // JSON pointer of the timeline entry that made it, e.g. "/timeline/2"
};

// The iteration a stall of `e` is indexed by; -1 for every other event.
inline int iteration_of(const Event& e) {
  const auto* stall = std::get_if<SetStall>(&e.action);
  return stall != nullptr ? stall->at_iteration : -1;
}

}  // namespace contend::emulator
