#include "contend/runner/results/iteration_log.h"

#include <fstream>

#include "contend/common/json.h"

namespace contend::runner {
namespace {

std::optional<double> number_of(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? std::optional<double>(j[key].get<double>()) : std::nullopt;
}

// The runtime's timings of a line: nullopt where one is missing.
std::optional<RuntimeTimings> timings_of(const nlohmann::json& j) {
  RuntimeTimings t;
  for (auto [key, out] : {std::pair{"forward_s", &t.forward_s}, std::pair{"backward_s", &t.backward_s},
                          std::pair{"send_wait_s", &t.send_wait_s}, std::pair{"flush_s", &t.flush_s},
                          std::pair{"step_s", &t.step_s}, std::pair{"sends", &t.sends}}) {
    const auto v = number_of(j, key);
    if (!v) {
      return std::nullopt;
    }
    *out = *v;
  }
  return t;
}

// One line: nullopt for a line that is not a record.
std::optional<IterationLine> line_of(const std::string& text, const std::string& path, int number) {
  const auto parsed = parse_json(text, path);
  if (!parsed || !parsed->is_object() || !parsed->contains("rank") || !(*parsed)["rank"].is_number_integer()) {
    return std::nullopt;
  }
  const nlohmann::json& j = *parsed;
  IterationLine line;
  line.number = number;
  line.rank = j["rank"].get<int>();
  if (j.contains("iteration") && j["iteration"].is_number_integer()) {
    line.iteration = j["iteration"].get<int>();
  }
  line.start_s = number_of(j, "start_s");
  line.iteration_s = number_of(j, "iteration_s");
  if (j.contains("sends")) {
    line.timings = timings_of(j);
    line.partial_timings = !line.timings;
  }
  return line;
}

}  // namespace

Result<std::vector<std::pair<double, double>>> IterationLog::rank0(int from_iteration) const {
  std::vector<std::pair<double, double>> out;
  for (const IterationLine& l : lines) {
    if (l.rank != 0) {
      continue;
    }
    if (!l.iteration || !l.start_s || !l.iteration_s) {
      return make_error(Errc::kParse, path + ":" + std::to_string(l.number) +
                                          ": rank 0's line without an integer iteration and a numeric start_s and "
                                          "iteration_s");
    }
    if (*l.iteration >= from_iteration) {
      out.emplace_back(*l.start_s, *l.iteration_s);
    }
  }
  return out;
}

Result<IterationLog> read_iteration_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return make_error(Errc::kNotFound, path + ": cannot read the iteration log");
  }
  IterationLog log{path, {}};
  int number = 0;
  for (std::string text; std::getline(in, text);) {
    if (auto line = line_of(text, path, ++number)) {
      log.lines.push_back(*line);
    }
  }
  return log;
}

}  // namespace contend::runner
