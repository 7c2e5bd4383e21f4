#include "contend/schedule/csv.h"

#include <algorithm>
#include <optional>

#include "dependencies.h"

namespace contend::schedule {
namespace {

using Grid = std::vector<std::vector<std::optional<Action>>>;

// Unit-time, step-synchronous run: at each step every rank whose next action's inputs were
// complete before the step runs it.
Result<Grid> aligned_grid(const Schedule& s) {
  detail::Dependencies deps(s);
  Grid grid(s.num_ranks);
  std::vector<std::size_t> pc(s.num_ranks, 0);
  std::size_t left = s.size();
  std::vector<Action> finished;
  while (left > 0) {
    finished.clear();
    for (int r = 0; r < s.num_ranks; ++r) {
      const bool runs = pc[r] < s.ranks[r].size() && deps.ready(s.ranks[r][pc[r]]);
      grid[r].push_back(runs ? std::optional<Action>(s.ranks[r][pc[r]]) : std::nullopt);
      if (runs) {
        finished.push_back(s.ranks[r][pc[r]++]);
      }
    }
    if (finished.empty()) {
      return make_error(Errc::kDeadlock, s.name + ": cannot align the CSV: the schedule deadlocks (run validate)");
    }
    for (const Action& a : finished) {
      deps.complete(a);
    }
    left -= finished.size();
  }
  return grid;
}

Grid compact_grid(const Schedule& s) {
  Grid grid(s.num_ranks);
  for (int r = 0; r < s.num_ranks; ++r) {
    grid[r].assign(s.ranks[r].begin(), s.ranks[r].end());
  }
  return grid;
}

}  // namespace

Result<std::string> to_csv(const Schedule& schedule, CsvLayout layout) {
  Grid grid;
  if (layout == CsvLayout::kAligned && !schedule.lowered()) {
    auto aligned = aligned_grid(schedule);
    if (!aligned) {
      return aligned.error();
    }
    grid = std::move(*aligned);
  } else {
    grid = compact_grid(schedule);
  }
  std::size_t width = 0;
  for (const auto& row : grid) {
    width = std::max(width, row.size());
  }
  std::string out;
  for (const auto& row : grid) {
    for (std::size_t t = 0; t < width; ++t) {
      if (t > 0) {
        out += ',';
      }
      if (t < row.size() && row[t]) {
        out += to_string(*row[t]);
      }
    }
    out += '\n';
  }
  return out;
}

Result<Schedule> from_csv(std::string_view text, const std::string& name) {
  Schedule s;
  s.name = name;
  int max_stage = -1;
  int max_mb = -1;
  int row = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    ++row;
    std::vector<Action> actions;
    int column = 0;
    for (std::size_t start = 0;; ++column) {
      const std::size_t comma = line.find(',', start);
      std::string_view cell =
          line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      while (!cell.empty() && cell.front() == ' ') {
        cell.remove_prefix(1);
      }
      while (!cell.empty() && cell.back() == ' ') {
        cell.remove_suffix(1);
      }
      if (!cell.empty()) {
        auto a = parse_action(cell);
        if (!a) {
          return make_error(a.error().code, name + ": row " + std::to_string(row) + ", column " +
                                                std::to_string(column + 1) + ": " + a.error().message);
        }
        max_stage = std::max(max_stage, a->stage);
        max_mb = std::max(max_mb, a->microbatch);
        actions.push_back(*a);
      }
      if (comma == std::string_view::npos) {
        break;
      }
      start = comma + 1;
    }
    s.ranks.push_back(std::move(actions));
  }
  // A trailing empty line is the file's final newline, not an idle rank.
  while (!s.ranks.empty() && s.ranks.back().empty()) {
    s.ranks.pop_back();
  }
  s.num_ranks = static_cast<int>(s.ranks.size());
  if (s.num_ranks == 0 || max_stage < 0) {
    return make_error(Errc::kParse, name + ": no actions");
  }
  s.num_stages = ((max_stage + s.num_ranks) / s.num_ranks) * s.num_ranks;
  s.num_microbatches = max_mb + 1;
  return s;
}

}  // namespace contend::schedule
