#include "contend/sim/report.h"

#include <cstdio>

#include "contend/common/json.h"
#include "contend/common/units.h"

namespace contend::sim {

nlohmann::ordered_json sim_json(const std::vector<SimResult>& results, const nlohmann::ordered_json& inputs) {
  auto doc = json_document("sim", 1);
  doc["inputs"] = inputs;
  // Built as locals and moved in: ordered_json keeps members in a vector, so a reference to one
  // member does not survive adding the next.
  auto out = nlohmann::ordered_json::array();
  for (const SimResult& r : results) {
    auto inflight = nlohmann::ordered_json::array();
    auto memory = nlohmann::ordered_json::array();
    auto busy = nlohmann::ordered_json::array();
    auto wait = nlohmann::ordered_json::array();
    auto idle = nlohmann::ordered_json::array();
    auto sent = nlohmann::ordered_json::array();
    for (const RankStats& s : r.ranks) {
      inflight.push_back(s.peak_inflight);
      memory.push_back(s.peak_memory_bytes);
      busy.push_back(s.busy_s);
      wait.push_back(s.wait_s);
      idle.push_back(s.idle_s);
      sent.push_back(s.bytes_sent);
    }
    nlohmann::ordered_json item;
    item["schedule"] = r.schedule;
    item["makespan_s"] = r.makespan_s;
    item["throughput_mb_per_s"] = r.throughput_mb_per_s;
    item["bubble_fraction"] = r.bubble_fraction;
    item["peak_inflight"] = std::move(inflight);
    item["peak_memory_bytes"] = std::move(memory);
    item["busy_s"] = std::move(busy);
    item["wait_s"] = std::move(wait);
    item["idle_s"] = std::move(idle);
    item["bytes_sent"] = std::move(sent);
    item["actions"] = r.actions;
    out.push_back(std::move(item));
  }
  doc["results"] = std::move(out);
  return doc;
}

std::string sim_table(const std::vector<SimResult>& results) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %12s %14s %8s %12s %12s %9s\n", "schedule", "makespan", "micro-batch/s",
                "bubble", "max inflight", "max memory", "vs first");
  out += line;
  double base = 0;
  for (const SimResult& r : results) {
    int inflight = 0;
    std::uint64_t memory = 0;
    for (const RankStats& s : r.ranks) {
      inflight = std::max(inflight, s.peak_inflight);
      memory = std::max(memory, s.peak_memory_bytes);
    }
    if (base == 0) {
      base = r.throughput_mb_per_s;
    }
    std::snprintf(line, sizeof line, "%-18s %12s %14.2f %7.1f%% %12d %12s %8.3fx\n", r.schedule.c_str(),
                  format_seconds(r.makespan_s).c_str(), r.throughput_mb_per_s, 100.0 * r.bubble_fraction, inflight,
                  format_size(memory).c_str(), base > 0 ? r.throughput_mb_per_s / base : 0.0);
    out += line;
  }
  return out;
}

}  // namespace contend::sim
