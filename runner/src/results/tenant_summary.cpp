// The other tenants' goodputs over a cell's repetitions (summary.h): in summary.json beside the
// pipeline's throughput, and a table of their own under the run's.

#include <algorithm>
#include <cstdio>

#include "contend/runner/results/summary.h"

namespace contend::runner {
namespace {

// An interval in `scale` units; "-" where one repetition cannot give one.
std::string interval_text(const Stats& s, double scale) {
  if (s.n < 2) {
    return "-";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s.ci95 * scale);
  return buf;
}

// A closed-loop job's median iteration time in ms; "-" for streams.
std::string iteration_text(const TenantSummary& t) {
  if (t.iteration_s.empty()) {
    return "-";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", t.iteration_stats.median * 1e3);
  return buf;
}

nlohmann::ordered_json stats_json(const Stats& s, const std::vector<double>& samples) {
  return {{"median", s.median}, {"ci95", s.ci95}, {"samples", samples}};
}

}  // namespace

std::vector<TenantSummary> summarize_tenants(const std::vector<std::vector<TenantGoodput>>& repetitions) {
  std::vector<TenantSummary> out;
  for (const auto& rep : repetitions) {
    for (const TenantGoodput& t : rep) {
      auto it = std::find_if(out.begin(), out.end(), [&](const TenantSummary& s) { return s.tenant == t.tenant; });
      if (it == out.end()) {
        it = out.insert(out.end(), TenantSummary{t.tenant, t.flows, {}, {}, {}, {}});
      }
      it->bps.push_back(t.bps);
      if (t.iterations > 0) {
        it->iteration_s.push_back(t.iteration_s);
      }
    }
  }
  for (TenantSummary& t : out) {
    t.stats = stats_of(t.bps);
    t.iteration_stats = stats_of(t.iteration_s);
  }
  return out;
}

nlohmann::ordered_json tenants_summary_json(const std::vector<TenantSummary>& tenants) {
  auto out = nlohmann::ordered_json::array();
  for (const TenantSummary& t : tenants) {
    out.push_back({{"tenant", t.tenant}, {"flows", t.flows}, {"goodput_bps", stats_json(t.stats, t.bps)}});
    if (!t.iteration_s.empty()) {
      out.back()["iteration_s"] = stats_json(t.iteration_stats, t.iteration_s);
    }
  }
  return out;
}

std::string tenants_table(const Summary& s) {
  TableWriter table({{"scenario", "", -16, "", nullptr},
                     {"schedule", "", -22, "", nullptr},
                     {"tenant", "", -16, "", nullptr},
                     {"flows", "", 6, "%.0f", nullptr},
                     {"mbps", "tenant Mbit/s", 14, "%.1f", nullptr},
                     {"ci95", "+/-95%", 10, "", nullptr},
                     {"iter", "iteration ms", 14, "", nullptr},
                     {"iter_ci95", "+/-95%", 10, "", nullptr}});
  bool any = false;
  for (const CellSummary& c : s.cells) {
    for (const TenantSummary& t : c.tenants) {
      any = true;
      (void)table.write({{"scenario", c.scenario},
                         {"schedule", c.schedule},
                         {"tenant", t.tenant},
                         {"flows", t.flows},
                         {"mbps", t.stats.median / 1e6},
                         {"ci95", interval_text(t.stats, 1e-6)},
                         {"iter", iteration_text(t)},
                         {"iter_ci95", t.iteration_s.empty() ? "-" : interval_text(t.iteration_stats, 1e3)}});
    }
  }
  return any ? "\n" + table.text() : std::string();
}

}  // namespace contend::runner
