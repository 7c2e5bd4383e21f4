#include "contend/sim/report.h"

#include <algorithm>

#include "contend/common/json.h"
#include "contend/common/records.h"
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
  TableWriter table({{"schedule", "", -26, "", nullptr},
                     {"makespan", "", 12, "", nullptr},
                     {"throughput", "micro-batch/s", 14, "%.2f", nullptr},
                     {"bubble", "", 8, "%.1f%%", nullptr},
                     {"inflight", "max inflight", 12, "", nullptr},
                     {"memory", "max memory", 12, "", nullptr},
                     {"relative", "vs first", 9, "%.3fx", nullptr}});
  const double base = results.empty() ? 0 : results.front().throughput_mb_per_s;
  for (const SimResult& r : results) {
    int inflight = 0;
    std::uint64_t memory = 0;
    for (const RankStats& s : r.ranks) {
      inflight = std::max(inflight, s.peak_inflight);
      memory = std::max(memory, s.peak_memory_bytes);
    }
    (void)table.write({{"schedule", r.schedule},
                       {"makespan", format_seconds(r.makespan_s)},
                       {"throughput", r.throughput_mb_per_s},
                       {"bubble", 100.0 * r.bubble_fraction},
                       {"inflight", inflight},
                       {"memory", format_size(memory)},
                       {"relative", base > 0 ? r.throughput_mb_per_s / base : 0.0}});
  }
  return table.text();
}

}  // namespace contend::sim
