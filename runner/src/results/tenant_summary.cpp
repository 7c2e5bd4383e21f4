// The other tenants' goodputs over a cell's repetitions (summary.h): in summary.json beside the
// pipeline's throughput, and a table of their own under the run's.

#include <algorithm>
#include <cstdio>

#include "contend/runner/results/summary.h"

namespace contend::runner {
namespace {

// A tenant's interval in Mbit/s; "-" where one repetition cannot give one.
std::string interval_text(const Stats& s) {
  if (s.n < 2) {
    return "-";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s.ci95 / 1e6);
  return buf;
}

}  // namespace

std::vector<TenantSummary> summarize_tenants(const std::vector<std::vector<TenantGoodput>>& repetitions) {
  std::vector<TenantSummary> out;
  for (const auto& rep : repetitions) {
    for (const TenantGoodput& t : rep) {
      auto it = std::find_if(out.begin(), out.end(), [&](const TenantSummary& s) { return s.tenant == t.tenant; });
      if (it == out.end()) {
        it = out.insert(out.end(), TenantSummary{t.tenant, t.flows, {}, {}});
      }
      it->bps.push_back(t.bps);
    }
  }
  for (TenantSummary& t : out) {
    t.stats = stats_of(t.bps);
  }
  return out;
}

nlohmann::ordered_json tenants_summary_json(const std::vector<TenantSummary>& tenants) {
  auto out = nlohmann::ordered_json::array();
  for (const TenantSummary& t : tenants) {
    out.push_back({{"tenant", t.tenant},
                   {"flows", t.flows},
                   {"goodput_bps", {{"median", t.stats.median}, {"ci95", t.stats.ci95}, {"samples", t.bps}}}});
  }
  return out;
}

std::string tenants_table(const Summary& s) {
  TableWriter table({{"scenario", "", -16, "", nullptr},
                     {"schedule", "", -22, "", nullptr},
                     {"tenant", "", -16, "", nullptr},
                     {"flows", "", 6, "%.0f", nullptr},
                     {"mbps", "tenant Mbit/s", 14, "%.1f", nullptr},
                     {"ci95", "+/-95%", 10, "", nullptr}});
  bool any = false;
  for (const CellSummary& c : s.cells) {
    for (const TenantSummary& t : c.tenants) {
      any = true;
      (void)table.write({{"scenario", c.scenario},
                         {"schedule", c.schedule},
                         {"tenant", t.tenant},
                         {"flows", t.flows},
                         {"mbps", t.stats.median / 1e6},
                         {"ci95", interval_text(t.stats)}});
    }
  }
  return any ? "\n" + table.text() : std::string();
}

}  // namespace contend::runner
