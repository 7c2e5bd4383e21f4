#include "history_command.h"

#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "compare_command.h"
#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/runner/regression/ci_reports.h"
#include "contend/runner/regression/history.h"
#include "report_command.h"

namespace contend::tools {
namespace {

struct HistoryOptions {
  std::vector<std::string> sources;
  std::string machine;
  VerdictArgs verdict;
};

// history.png from history.json by reports/report_history.py; a convenience, like run's report.
void draw(const std::string& dir) {
  ChildOptions co;
  co.output_path = dir + "/history.log";
  auto child = ChildProcess::spawn({report_python(), report_script("report_history.py"), dir}, co);
  auto code = child ? child->wait(std::chrono::minutes(2)) : Result<int>(child.error());
  std::printf(code && *code == 0 ? "figure: %s/history.png\n" : "figure: not drawn, see %s/history.log\n", dir.c_str());
}

Result<void> write_reports(const runner::History& h, const runner::VerdictOptions& o, const std::string& dir) {
  const runner::CiReportInput in{&h.runs.back().summary, nullptr, &h, o, "the history"};
  if (auto ok = runner::write_ci_reports(dir, in); !ok) {
    return ok;
  }
  if (auto ok = write_file_atomic(dir + "/history.json", runner::history_json(h).dump(1) + "\n"); !ok) {
    return ok;
  }
  std::printf("reports: %s/{history.json,junit.xml,summary.md,benchmark.json,bmf.json}\n", dir.c_str());
  draw(dir);
  return {};
}

int history(const HistoryOptions& o) {
  auto runs = runner::read_runs(o.sources);
  auto one = runs ? runner::one_history(std::move(*runs), o.machine) : Result<std::vector<runner::Run>>(runs.error());
  if (!one) {
    return fail("history", one.error().message);
  }
  auto options = verdict_options(o.verdict, true);  // one machine: throughput unless --by says
  if (!options) {
    return fail("history", options.error().message);
  }
  const runner::History h = runner::history_of(std::move(*one), options->quantity, options->tolerance);
  std::printf("%s: %zu runs on %s, %s, change points of at least %.1f%%\n%s", h.runs.front().summary.experiment.c_str(),
              h.runs.size(), h.runs.front().machine.c_str(), runner::quantity_name(h.quantity), 100 * h.tolerance,
              runner::history_table(h).c_str());
  if (!o.verdict.reports.empty()) {
    if (auto ok = write_reports(h, *options, o.verdict.reports); !ok) {
      return fail("history", ok.error().message);
    }
  }
  int losses = 0;
  for (const runner::CellSeries& c : h.cells) {
    losses += runner::ends_in_loss(c) ? 1 : 0;
  }
  std::printf("%s\n", losses > 0 ? (std::to_string(losses) + " cell(s) end in a loss").c_str()
                                 : "no loss at the end of the history");
  return losses > 0 ? 3 : 0;
}

}  // namespace

std::function<int()> add_history_command(CLI::App& sub) {
  auto o = std::make_shared<HistoryOptions>();
  sub.add_option("runs", o->sources,
                 "Results folders, folders of them (in the order they started) or files listing them one per line "
                 "(in that order)")
      ->required();
  sub.add_option("--machine", o->machine, "Only the runs of this machine (as the error listing the machines names it)");
  add_tolerance_option(&sub, o->verdict);
  sub.get_option("--tolerance")->description("The smallest change point reported (percent or fraction, default 2%)");
  add_by_option(&sub, o->verdict, "--by")
      ->description(
          "What each run contributes: its median `throughput` "
          "(default) or `speedup` over the baseline schedule");
  add_reports_option(&sub, o->verdict);
  sub.footer(
      "Per cell, the runs' medians in order and their change points (E-divisive means with a permutation test, "
      "p <= 0.01, at least 3 runs on each side, at least --tolerance in size), each with the commit where it "
      "began. Default --by: throughput (one machine's runs). Exit 3 when a cell's latest change point is a loss, "
      "1 on bad input. docs/regression.md");
  return [o] { return history(*o); };
}

}  // namespace contend::tools
