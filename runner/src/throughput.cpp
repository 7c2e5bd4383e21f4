#include "contend/runner/throughput.h"

#include <algorithm>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "contend/common/units.h"

namespace contend::runner {

double samples_per_iteration(const Workload& w) {
  return static_cast<double>(w.microbatches) * w.microbatch_size;
}

namespace {

// Rank 0's iterations: (start_s, iteration_s) in iteration order, from the iteration log.
Result<std::vector<std::pair<double, double>>> rank0_iterations(const std::string& path, int from_iteration) {
  std::ifstream in(path);
  if (!in) {
    return make_error(Errc::kNotFound, path + ": cannot read the iteration log");
  }
  std::vector<std::pair<double, double>> out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("rank", nlohmann::json()) != 0) {
      continue;  // another rank's line, or not one of the records
    }
    const auto number = [&](const char* key) { return j.contains(key) && j[key].is_number(); };
    if (!number("iteration") || !number("start_s") || !number("iteration_s")) {
      return make_error(Errc::kParse, path + ":" + std::to_string(n) +
                                          ": rank 0's line without a numeric iteration, start_s and iteration_s");
    }
    if (j["iteration"].get<double>() >= from_iteration) {
      out.emplace_back(j["start_s"].get<double>(), j["iteration_s"].get<double>());
    }
  }
  return out;
}

// The steady clock at the scenario's time 0: the events log's start line.
Result<double> scenario_zero(const std::string& events_path) {
  std::ifstream in(events_path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return make_error(Errc::kNotFound, events_path + ": cannot read the scenario's start from the events log");
  }
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("steady_s") || !j["steady_s"].is_number()) {
    return make_error(Errc::kParse, events_path + ": the first line is not the player's start line with steady_s");
  }
  return j["steady_s"].get<double>();
}

Result<double> window_throughput(const std::vector<std::pair<double, double>>& its, const Workload& w,
                                 const MeasureWindow& window, double zero, const std::string& path) {
  double samples = 0;
  double first = std::numeric_limits<double>::infinity();
  double last = 0;
  for (const auto& [start_abs, seconds] : its) {
    const double start = start_abs - zero;
    first = std::min(first, start);
    last = std::max(last, start + seconds);
    const double inside = std::min(start + seconds, window.to_s) - std::max(start, window.from_s);
    if (inside > 0 && seconds > 0) {
      samples += samples_per_iteration(w) * inside / seconds;
    }
  }
  if (its.empty() || first > window.from_s || last < window.to_s) {
    return make_error(Errc::kInvalidArgument,
                      path + ": rank 0 ran from " + format_seconds(its.empty() ? 0 : first) + " to " +
                          format_seconds(last) + " of the scenario's clock, not over the measure window (" +
                          format_seconds(window.from_s) + " to " + format_seconds(window.to_s) +
                          "): raise the workload's iterations or narrow the window");
  }
  return samples / (window.to_s - window.from_s);
}

}  // namespace

Result<double> iterations_throughput(const std::vector<std::pair<double, double>>& its, const Workload& w,
                                     const std::optional<MeasureWindow>& window, double zero, const std::string& what) {
  if (window) {
    return window_throughput(its, w, *window, zero, what);
  }
  double first_start = -1;
  double last_end = 0;
  for (const auto& [start, seconds] : its) {
    if (first_start < 0 || start < first_start) {
      first_start = start;
    }
    last_end = std::max(last_end, start + seconds);
  }
  const int measured = static_cast<int>(its.size());
  if (measured < w.iterations || last_end <= first_start) {
    return make_error(Errc::kParse, what + ": " + std::to_string(measured) + " measured iterations of rank 0, " +
                                        "expected " + std::to_string(w.iterations));
  }
  return measured * samples_per_iteration(w) / (last_end - first_start);
}

Result<double> cell_throughput(const std::string& path, const Workload& w, const std::optional<MeasureWindow>& window,
                               const std::string& events_path) {
  auto its = rank0_iterations(path, window ? 0 : w.warmup);
  if (!its) {
    return its.error();
  }
  double zero = 0;
  if (window) {
    auto z = scenario_zero(events_path);
    if (!z) {
      return z.error();
    }
    zero = *z;
  }
  return iterations_throughput(*its, w, window, zero, path);
}

}  // namespace contend::runner
