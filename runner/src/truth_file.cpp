// contend.truth/1: the oracle's ground truth, written by the runner and read by rank 0 (truth.h).

#include "contend/common/fd.h"
#include "contend/common/json_reader.h"
#include "contend/common/records.h"
#include "contend/common/json.h"
#include "contend/runner/truth.h"

namespace contend::runner {
namespace {

constexpr std::size_t kMaxTruthBytes = 64u << 20;

Result<RateTrace> read_link(const JsonReader& r) {
  if (auto ok = r.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<RateTrace::Point> points;
  for (std::size_t i = 0; i < r.json().size(); ++i) {
    const nlohmann::json& p = r.json()[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) {
      return r.at(i).error("expected a point [time_s, rate_bps]");
    }
    points.push_back({p[0].get<double>(), p[1].get<double>()});
  }
  auto trace = RateTrace::from_points(std::move(points));
  if (!trace) {
    return r.error(trace.error().message);
  }
  return trace;
}

}  // namespace

Result<void> write_truth(const std::string& path, const std::string& scenario, const std::vector<RateTrace>& links) {
  auto doc = json_document("truth", 1);
  doc["scenario"] = scenario;
  auto all = nlohmann::ordered_json::array();
  for (const RateTrace& t : links) {
    auto points = nlohmann::ordered_json::array();
    for (const RateTrace::Point& p : t.points()) {
      points.push_back({p.time_s, p.rate_bps});
    }
    all.push_back(std::move(points));
  }
  doc["links"] = std::move(all);
  return write_json_document(path, doc);
}

Result<std::vector<RateTrace>> read_truth(const std::string& path) {
  auto text = read_file(path, kMaxTruthBytes);
  if (!text) {
    return text.error();
  }
  auto doc = parse_document(*text, path, "truth", 1, {"scenario", "links"});
  if (!doc) {
    return doc.error();
  }
  const JsonReader r(*doc, path);
  if (!r.has("links")) {
    return r.error("expected \"links\": one list of points per link");
  }
  const JsonReader links = r.at("links");
  if (auto ok = links.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<RateTrace> out;
  std::size_t points = 0;
  for (std::size_t i = 0; i < links.json().size(); ++i) {
    points += links.json()[i].is_array() ? links.json()[i].size() : 0;
    if (points > kMaxTracePoints) {
      return links.at(i).error("more than " + std::to_string(kMaxTracePoints) + " points in all");
    }
    auto trace = read_link(links.at(i));
    if (!trace) {
      return trace.error();
    }
    out.push_back(std::move(*trace));
  }
  return out;
}

}  // namespace contend::runner
