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

// A closed-loop flow's iterations (every flow of a job reports its job's): a job that ended none
// in the cell was not measured.
Result<void> add_iterations(const JsonReader& line, const std::string& tenant, std::int64_t iterations,
                            double iteration_s, TenantGoodput& out) {
  if (iterations < 0 || iterations > 1'000'000'000 || !std::isfinite(iteration_s) || iteration_s < 0) {
    return line.error("expected a count of iterations and their median time in seconds (0 or more)");
  }
  if (iterations == 0) {
    return make_error(Errc::kIo, "tenant " + tenant + " ended no iteration in the cell (an iteration longer " +
                                     "than the scenario: fewer bytes, less compute or a longer duration)");
  }
  out.iterations = static_cast<int>(iterations);
  out.iteration_s = iteration_s;
  return {};
}

// One flow_summary line added to its tenant's entry.
Result<void> add_flow(const JsonReader& line, std::vector<TenantGoodput>& out) {
  auto flow = line.string("flow");
  auto bps = line.number("achieved_bps");
  auto error = line.optional_string("error");
  auto iterations = line.optional_integer("iterations");
  auto iteration_s = line.optional_number("iteration_s");
  if (auto e = first_error(flow, bps, error, iterations, iteration_s)) {
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
    it = out.insert(out.end(), TenantGoodput{tenant, 0, 0, 0, 0});
  }
  ++it->flows;
  it->bps += *bps;
  if (iterations->has_value()) {
    return add_iterations(line, tenant, **iterations, iteration_s->value_or(0), *it);
  }
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
    if (t.iterations > 0) {
      out.back()["iterations"] = t.iterations;
      out.back()["iteration_s"] = t.iteration_s;
    }
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
    auto keys = entry.check_keys({"tenant", "flows", "bps", "iterations", "iteration_s"});
    auto tenant = entry.string("tenant");
    auto flows = entry.integer("flows");
    auto bps = entry.number("bps");
    auto iterations = entry.optional_integer("iterations");
    auto iteration_s = entry.optional_number("iteration_s");
    if (auto e = first_error(keys, tenant, flows, bps, iterations, iteration_s)) {
      return *e;
    }
    if (*flows < 1 || *flows > 1'000'000 || !std::isfinite(*bps) || *bps < 0) {
      return entry.error("expected a count of flows (1 or more) and a goodput in bit/s (0 or more)");
    }
    const long long n = iterations->value_or(0);
    const double s = iteration_s->value_or(0);
    if (n < 0 || n > 1'000'000'000 || !std::isfinite(s) || s < 0 || (n > 0) != (s > 0)) {
      return entry.error("expected a closed-loop tenant's iterations (1 or more) with their median time (> 0 s)");
    }
    out.push_back(TenantGoodput{*tenant, static_cast<int>(*flows), *bps, static_cast<int>(n), s});
  }
  return out;
}

}  // namespace contend::runner
