#include "contend/sim/chrome_trace.h"

#include <nlohmann/json.hpp>

namespace contend::sim {

std::string chrome_trace_json(const SimResult& result) {
  using nlohmann::json;
  json events = json::array();
  static const char* kLaneNames[] = {"compute", "send", "recv"};
  for (int r = 0; r < result.num_ranks; ++r) {
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", r}, {"args", {{"name", "rank " + std::to_string(r)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", r}, {"args", {{"sort_index", r}}}});
    for (int lane = 0; lane < 3; ++lane) {
      events.push_back(
          {{"ph", "M"}, {"name", "thread_name"}, {"pid", r}, {"tid", lane}, {"args", {{"name", kLaneNames[lane]}}}});
    }
  }
  constexpr double kUs = 1e6;
  for (const TraceEvent& e : result.trace) {
    const int tid = static_cast<int>(e.lane);
    const std::string name = schedule::to_string(e.action);
    json args = {{"stage", e.action.stage}, {"microbatch", e.action.microbatch}};
    if (e.peer_rank >= 0) {
      args["peer_rank"] = e.peer_rank;
    }
    const char* cat =
        e.lane == Lane::kCompute ? (e.action.op == schedule::Op::kForward ? "forward" : "backward") : kLaneNames[tid];
    events.push_back({{"ph", "X"},
                      {"name", name},
                      {"cat", cat},
                      {"pid", e.rank},
                      {"tid", tid},
                      {"ts", e.start_s * kUs},
                      {"dur", (e.end_s - e.start_s) * kUs},
                      {"args", args}});
    if (e.flow_id >= 0 && e.lane == Lane::kSend) {
      events.push_back({{"ph", "s"},
                        {"name", "transfer"},
                        {"cat", "transfer"},
                        {"id", e.flow_id},
                        {"pid", e.rank},
                        {"tid", tid},
                        {"ts", e.start_s * kUs}});
    } else if (e.flow_id >= 0 && e.lane == Lane::kRecv) {
      // Bound to the enclosing slice: the receive, which ends when the data is there.
      events.push_back({{"ph", "f"},
                        {"bp", "e"},
                        {"name", "transfer"},
                        {"cat", "transfer"},
                        {"id", e.flow_id},
                        {"pid", e.rank},
                        {"tid", tid},
                        {"ts", e.end_s * kUs}});
    }
  }
  json doc = {{"displayTimeUnit", "ms"},
              {"otherData", {{"schedule", result.schedule}, {"makespan_s", result.makespan_s}}},
              {"traceEvents", std::move(events)}};
  return doc.dump() + "\n";
}

}  // namespace contend::sim
