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

}  // namespace contend::schedule
