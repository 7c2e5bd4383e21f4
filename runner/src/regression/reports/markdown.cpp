// summary.md: a table for a CI job's summary ($GITHUB_STEP_SUMMARY) or a pull request's comment,
// the verdict of each cell or the change points of each series, failing rows first in bold.

#include <cstdio>
#include <sstream>

#include "regression/reports/registry.h"

namespace contend::runner::ci_reports {
namespace {

std::string cell_text(std::string s) {
  std::string out;
  for (char c : s) {
    out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  }
  return out;
}

std::string number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string verdict_rows(const CiReportInput& in, int& failing) {
  std::ostringstream md;
  md << "| scenario | schedule | reference | now | ratio [interval] | p | n | verdict |\n"
     << "|---|---|---:|---:|---|---:|---:|---|\n";
  for (const Verdict& v : *in.verdicts) {
    failing += v.fails ? 1 : 0;
    const std::string interval = v.shift.confidence > 0
                                     ? number(" [%.3f, ", v.shift.low) + number("%.3f]", v.shift.high)
                                     : std::string(" [none]");
    const std::string verdict = std::string(change_name(v.change)) + ": " + v.why;
    md << "| " << cell_text(v.scenario) << " | " << cell_text(v.schedule) << " | "
       << number("%.4g", stats_of(v.reference).median) << " | " << number("%.4g", stats_of(v.now).median) << " | "
       << number("%.3f", v.shift.ratio) << interval << " | " << number("%.3f", v.shift.p) << " | " << v.reference.size()
       << "+" << v.now.size() << " | " << (v.fails ? "**" + cell_text(verdict) + "**" : cell_text(verdict)) << " |\n";
  }
  return md.str();
}

std::string history_rows(const CiReportInput& in, int& failing) {
  const History& h = *in.history;
  std::ostringstream md;
  md << "| scenario | schedule | runs | first | last | change points |\n|---|---|---:|---:|---:|---|\n";
  for (const CellSeries& s : h.cells) {
    std::string changes;
    for (const ChangePoint& p : s.changes) {
      const Run& run = h.runs[s.runs[p.index]];
      changes += (changes.empty() ? "" : "; ") + ("run " + std::to_string(s.runs[p.index] + 1) + " (`" + run.commit +
                                                  "`) " + number("%+.1f%%", 100 * (p.after / p.before - 1)));
    }
    failing += ends_in_loss(s) ? 1 : 0;
    changes = changes.empty() ? "none" : cell_text(changes);
    md << "| " << cell_text(s.scenario) << " | " << cell_text(s.schedule) << " | " << s.values.size() << " | "
       << number("%.4g", s.values.front()) << " | " << number("%.4g", s.values.back()) << " | "
       << (ends_in_loss(s) ? "**" + changes + "** (a loss still there)" : changes) << " |\n";
  }
  return md.str();
}

}  // namespace

std::string markdown(const CiReportInput& in) {
  int failing = 0;
  const bool history = in.history != nullptr;
  const std::string rows = history ? history_rows(in, failing) : verdict_rows(in, failing);
  const std::size_t cells = history ? in.history->cells.size() : in.verdicts->size();
  std::ostringstream md;
  md << "### contend: " << cell_text(in.now->experiment) << (history ? " history" : " against " + in.reference)
     << "\n\n"
     << (failing > 0 ? "**" + std::to_string(failing) + " of " + std::to_string(cells) + " cells regressed**"
                     : "No regression in " + std::to_string(cells) + " cells")
     << " (" << quantity_name(in.options.quantity) << ", tolerance " << number("%.1f%%", 100 * in.options.tolerance)
     << (history ? ", " + std::to_string(in.history->runs.size()) + " runs on " + cell_text(in.history->runs[0].machine)
                 : ", " + test_name(in.options) + " at " + number("%.0f%%", 100 * in.options.alpha))
     << ")\n\n"
     << rows;
  return md.str();
}

}  // namespace contend::runner::ci_reports
