// contend.truth/1: a scenario's network as the workers are told it (truth/network.h).

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/records.h"
#include "contend/runner/truth/network.h"

namespace contend::runner {
namespace {

// A scenario may hold a million rate points (kMaxTracePoints) and the truth writes each as
// [t, bps], about 50 bytes and 3 values: its own limits, beyond every other file's.
constexpr JsonLimits kTruthLimits{64u << 20, kMaxJsonDepth, 8u << 20};

nlohmann::ordered_json points_json(const std::vector<StallSchedule::Change>& changes) {
  auto out = nlohmann::ordered_json::array();
  for (const StallSchedule::Change& c : changes) {
    out.push_back({c.at, c.stall_s});
  }
  return out;
}

// An array of [x, y] points of numbers, each counted against `budget`.
Result<std::vector<std::pair<double, double>>> read_points(const JsonReader& r, std::size_t& budget) {
  if (auto ok = r.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < r.json().size(); ++i) {
    const nlohmann::json& p = r.json()[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) {
      return r.at(i).error("expected a point [x, y] of two numbers");
    }
    if (budget == 0) {
      return r.at(i).error("more than " + std::to_string(kMaxTracePoints) + " points in all");
    }
    --budget;
    out.emplace_back(p[0].get<double>(), p[1].get<double>());
  }
  return out;
}

// A link's way: its points, or none for a way nothing shapes (no limit; JSON has no infinity).
Result<RateTrace> read_link(const JsonReader& r, std::size_t& budget) {
  auto points = read_points(r, budget);
  if (!points) {
    return points.error();
  }
  if (points->empty()) {
    return RateTrace::unlimited();
  }
  std::vector<RateTrace::Point> out;
  for (const auto& [t, bps] : *points) {
    out.push_back({t, bps});
  }
  auto trace = RateTrace::from_points(std::move(out));
  if (!trace) {
    return r.error(trace.error().message);
  }
  return trace;
}

Result<std::pair<std::pair<int, int>, StallSchedule>> read_stall(const JsonReader& r, std::size_t& budget) {
  if (auto ok = r.check_keys({"nodes", "at_time", "at_iteration"}); !ok) {
    return ok.error();
  }
  const nlohmann::json& nodes = r.json().contains("nodes") ? r.json()["nodes"] : nlohmann::json();
  if (!nodes.is_array() || nodes.size() != 2 || !nodes[0].is_number_integer() || !nodes[1].is_number_integer() ||
      nodes[0].get<std::int64_t>() < 0 || nodes[0].get<std::int64_t>() >= nodes[1].get<std::int64_t>() ||
      nodes[1].get<std::int64_t>() > 1 << 20) {
    return r.error(
        "expected \"nodes\": [a, b], the pair of ranks it stalls (a chain's: the nodes its link joins), 0 <= a < b");
  }
  StallSchedule s;
  const auto at_time = [](StallSchedule& x, double at, double stall) { x.add_at_time(at, stall); };
  const auto at_iteration = [](StallSchedule& x, double at, double stall) {
    x.add_at_iteration(static_cast<int>(at), stall);
  };
  for (const auto& [key, add] : {std::pair<const char*, void (*)(StallSchedule&, double, double)>{"at_time", at_time},
                                 {"at_iteration", at_iteration}}) {
    if (!r.has(key)) {
      continue;
    }
    auto points = read_points(r.at(key), budget);
    if (!points) {
      return points.error();
    }
    double last = 0;
    for (const auto& [at, stall] : *points) {
      if (!(at >= last) || !(at < 1e12) || !(stall >= 0 && stall <= kMaxStallS)) {
        return r.error_at(key, "expected [time or iteration, stall_s] points in order, each stall 0 to 10 s");
      }
      last = at;
      add(s, at, stall);
    }
  }
  return std::pair{std::pair{nodes[0].get<int>(), nodes[1].get<int>()}, std::move(s)};
}

}  // namespace

Result<void> write_truth(const std::string& path, const std::string& scenario, const NetworkTruth& truth) {
  auto doc = json_document("truth", 1);
  doc["scenario"] = scenario;
  const auto ways = [](const std::vector<RateTrace>& traces) {
    auto out = nlohmann::ordered_json::array();
    for (const RateTrace& t : traces) {
      auto points = nlohmann::ordered_json::array();
      if (!t.is_unlimited()) {  // a way nothing shapes: no points
        for (const RateTrace::Point& p : t.points()) {
          points.push_back({p.time_s, p.rate_bps});
        }
      }
      out.push_back(std::move(points));
    }
    return out;
  };
  doc["links"] = ways(truth.links);
  if (!truth.back.empty()) {
    doc["back"] = ways(truth.back);
  }
  auto stalls = nlohmann::ordered_json::array();
  for (const auto& [nodes, schedule] : truth.stalls) {
    stalls.push_back({{"nodes", {nodes.first, nodes.second}},
                      {"at_time", points_json(schedule.by_time())},
                      {"at_iteration", points_json(schedule.by_iteration())}});
  }
  doc["stalls"] = std::move(stalls);
  return write_json_document(path, doc);
}

Result<NetworkTruth> read_truth(const std::string& path) {
  auto text = read_file(path, kTruthLimits.bytes);
  if (!text) {
    return text.error();
  }
  auto doc = parse_document(*text, path, "truth", 1, {"scenario", "links", "back", "stalls"}, kTruthLimits);
  if (!doc) {
    return doc.error();
  }
  const JsonReader r(*doc, path);
  if (!r.has("links") || !r.json()["links"].is_array()) {
    return r.error("expected \"links\": one list of points per link");
  }
  NetworkTruth out;
  std::size_t budget = kMaxTracePoints;
  for (auto [key, traces] : {std::pair{"links", &out.links}, std::pair{"back", &out.back}}) {
    if (!r.has(key)) {
      continue;
    }
    const JsonReader ways = r.at(key);
    if (auto ok = ways.expect_array(); !ok) {
      return ok.error();
    }
    for (std::size_t i = 0; i < ways.json().size(); ++i) {
      auto trace = read_link(ways.at(i), budget);
      if (!trace) {
        return trace.error();
      }
      traces->push_back(std::move(*trace));
    }
  }
  if (!out.back.empty() && out.back.size() != out.links.size()) {
    return r.error_at(
        "back", "expected one list of points per link, as \"links\" has (" + std::to_string(out.links.size()) + ")");
  }
  if (r.has("stalls")) {
    const JsonReader stalls = r.at("stalls");
    if (auto ok = stalls.expect_array(); !ok) {
      return ok.error();
    }
    for (std::size_t i = 0; i < stalls.json().size(); ++i) {
      auto stall = read_stall(stalls.at(i), budget);
      if (!stall) {
        return stall.error();
      }
      out.stalls.insert(std::move(*stall));
    }
  }
  return out;
}

}  // namespace contend::runner
