#include <algorithm>

#include "contend/schedule/csv.h"

namespace contend::schedule {
namespace {

std::string_view trim(std::string_view cell) {
  while (!cell.empty() && (cell.front() == ' ' || cell.front() == '"')) {
    cell.remove_prefix(1);
  }
  while (!cell.empty() && (cell.back() == ' ' || cell.back() == '"')) {
    cell.remove_suffix(1);
  }
  return cell;
}

// The actions of one non-empty cell: one action, or the sub-actions of PyTorch's composite
// "(0F7;7B3)OVERLAP_F_B" in order.
Result<std::vector<Action>> parse_cell(std::string_view cell) {
  std::vector<Action> out;
  if (cell.front() != '(') {
    auto a = parse_action(cell);
    if (!a) {
      return a.error();
    }
    out.push_back(*a);
    return out;
  }
  const std::size_t close = cell.find(')');
  if (close == std::string_view::npos || cell.substr(close + 1) != "OVERLAP_F_B") {
    return make_error(Errc::kUnsupported, "\"" + std::string(cell) +
                                              "\": the only composite cell contend reads is PyTorch's "
                                              "\"(<action>;<action>...)OVERLAP_F_B\"");
  }
  std::string_view inner = cell.substr(1, close - 1);
  while (!inner.empty()) {
    const std::size_t semi = inner.find(';');
    auto a = parse_action(trim(inner.substr(0, semi)));
    if (!a) {
      return a.error();
    }
    out.push_back(*a);
    inner = semi == std::string_view::npos ? std::string_view() : inner.substr(semi + 1);
  }
  return out;
}

// Splits one row into the rank's actions, recording each one's column (1-based).
Result<void> read_row(std::string_view line, std::vector<Action>& actions, std::vector<int>& columns) {
  int column = 1;
  for (std::size_t start = 0;; ++column) {
    const std::size_t comma = line.find(',', start);
    const std::string_view cell =
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!cell.empty()) {
      auto parsed = parse_cell(cell);
      if (!parsed) {
        return with_context(parsed.error(), "column " + std::to_string(column));
      }
      for (const Action& a : *parsed) {
        actions.push_back(a);
        columns.push_back(column);
      }
    }
    if (comma == std::string_view::npos) {
      return {};
    }
    start = comma + 1;
  }
}

// Which rank runs each stage, from where its actions are; an error for a stage on two ranks or
// on none. Empty when every stage s sits on rank s % ranks (the looped default).
Result<std::vector<int>> infer_placement(const CsvTable& t, const std::string& name) {
  const Schedule& s = t.schedule;
  std::vector<int> owner(s.num_stages, -1);
  std::vector<int> first_column(s.num_stages, 0);
  for (int r = 0; r < s.num_ranks; ++r) {
    for (std::size_t i = 0; i < s.ranks[r].size(); ++i) {
      const int st = s.ranks[r][i].stage;
      if (owner[st] < 0) {
        owner[st] = r;
        first_column[st] = t.columns[r][i];
      } else if (owner[st] != r) {
        return make_error(Errc::kInvalidArgument,
                          name + ": stage " + std::to_string(st) + " has actions on rank " + std::to_string(owner[st]) +
                              " (row " + std::to_string(owner[st] + 1) + ", column " +
                              std::to_string(first_column[st]) + ") and on rank " + std::to_string(r) + " (row " +
                              std::to_string(r + 1) + ", column " + std::to_string(t.columns[r][i]) + " (" +
                              to_string(s.ranks[r][i]) + ")); a stage runs on one rank");
      }
    }
  }
  bool looped = true;
  for (int st = 0; st < s.num_stages; ++st) {
    if (owner[st] < 0) {
      return make_error(Errc::kInvalidArgument, name + ": stage " + std::to_string(st) +
                                                    " has no actions on any rank (stages run 0.." +
                                                    std::to_string(s.num_stages - 1) + ")");
    }
    looped = looped && owner[st] == st % s.num_ranks;
  }
  return looped ? std::vector<int>{} : owner;
}

}  // namespace

Result<CsvTable> read_csv_table(std::string_view text, const std::string& name) {
  CsvTable t;
  t.schedule.name = name;
  for (int row = 1; !text.empty(); ++row) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    t.schedule.ranks.emplace_back();
    t.columns.emplace_back();
    if (auto ok = read_row(line, t.schedule.ranks.back(), t.columns.back()); !ok) {
      return make_error(ok.error().code, name + ": row " + std::to_string(row) + ", " + ok.error().message);
    }
  }
  // A trailing empty line is the file's final newline, not an idle rank.
  while (!t.schedule.ranks.empty() && t.schedule.ranks.back().empty()) {
    t.schedule.ranks.pop_back();
    t.columns.pop_back();
  }
  int max_stage = -1;
  int max_mb = -1;
  for (const auto& actions : t.schedule.ranks) {
    for (const Action& a : actions) {
      max_stage = std::max(max_stage, a.stage);
      max_mb = std::max(max_mb, a.microbatch);
    }
  }
  if (t.schedule.ranks.empty() || max_stage < 0) {
    return make_error(Errc::kParse, name + ": no actions");
  }
  t.schedule.num_ranks = static_cast<int>(t.schedule.ranks.size());
  t.schedule.num_stages = max_stage + 1;
  t.schedule.num_microbatches = max_mb + 1;
  auto placement = infer_placement(t, name);
  if (!placement) {
    return placement.error();
  }
  t.schedule.placement = std::move(*placement);
  return t;
}

Result<Schedule> from_csv(std::string_view text, const std::string& name) {
  auto t = read_csv_table(text, name);
  if (!t) {
    return t.error();
  }
  return std::move(t->schedule);
}

}  // namespace contend::schedule
