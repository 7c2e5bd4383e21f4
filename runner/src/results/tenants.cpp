#include "results/tenants.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "contend/common/json.h"

namespace contend::runner {
namespace {

// The tenant a flow belongs to: a traffic pattern's name before ':', else the flow's own name.
std::string tenant_of(const std::string& flow) {
  const auto colon = flow.find(':');
  return colon == std::string::npos ? flow : flow.substr(0, colon);
}

// One flow_summary line added to its tenant's entry.
Result<void> add_flow(const JsonReader& line, std::vector<TenantGoodput>& out) {
  auto flow = line.string("flow");
  auto bps = line.number("achieved_bps");
  auto error = line.optional_string("error");
  if (auto e = first_error(flow, bps, error)) {
    return *e;
  }
  const std::string tenant = tenant_of(*flow);
  if (!error->value_or("").empty()) {
    return make_error(Errc::kIo, "tenant " + tenant + ": flow " + *flow + " failed: " + **error +
                                     " (its traffic stopped early: the contention was not the scenario's)");
  }
  if (!std::isfinite(*bps) || *bps < 0) {
    return line.error_at("achieved_bps", "expected a goodput (0 or more)");
  }
  auto it = std::find_if(out.begin(), out.end(), [&](const TenantGoodput& t) { return t.tenant == tenant; });
  if (it == out.end()) {
    it = out.insert(out.end(), TenantGoodput{tenant, 0, 0});
  }
  ++it->flows;
  it->bps += *bps;
  return {};
}

}  // namespace

Result<std::vector<TenantGoodput>> tenant_goodput(const std::string& events_path) {
  std::ifstream in(events_path);
  if (!in) {
    return make_error(Errc::kNotFound, events_path + ": cannot read the events log");
  }
  std::vector<TenantGoodput> out;
  std::size_t number = 0;
  for (std::string text; std::getline(in, text);) {
    const std::string where = events_path + ": line " + std::to_string(++number);
    auto line = parse_json(text, where);
    if (!line) {
      return line.error();
    }
    const JsonReader r(*line, where);
    if (!line->is_object() || line->value("kind", nlohmann::json()) != "flow_summary") {
      continue;
    }
    if (auto ok = add_flow(r, out); !ok) {
      return ok.error();
    }
  }
  return out;
}

nlohmann::ordered_json tenants_json(const std::vector<TenantGoodput>& tenants) {
  auto out = nlohmann::ordered_json::array();
  for (const TenantGoodput& t : tenants) {
    out.push_back({{"tenant", t.tenant}, {"flows", t.flows}, {"bps", t.bps}});
  }
  return out;
}

Result<std::vector<TenantGoodput>> read_tenants(const JsonReader& r) {
  if (auto ok = r.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<TenantGoodput> out;
  for (std::size_t i = 0; i < r.json().size(); ++i) {
    const JsonReader entry = r.at(i);
    auto keys = entry.check_keys({"tenant", "flows", "bps"});
    auto tenant = entry.string("tenant");
    auto flows = entry.integer("flows");
    auto bps = entry.number("bps");
    if (auto e = first_error(keys, tenant, flows, bps)) {
      return *e;
    }
    if (*flows < 1 || *flows > 1'000'000 || !std::isfinite(*bps) || *bps < 0) {
      return entry.error("expected a count of flows (1 or more) and a goodput in bit/s (0 or more)");
    }
    out.push_back(TenantGoodput{*tenant, static_cast<int>(*flows), *bps});
  }
  return out;
}

}  // namespace contend::runner
