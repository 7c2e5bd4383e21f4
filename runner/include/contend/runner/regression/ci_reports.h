#pragma once
// Reports CI systems read (docs/regression.md), from a comparison's verdicts or a history:
// junit.xml (a test case per cell, a failure carrying the numbers), summary.md (a job summary or
// a pull request's comment), benchmark.json (github-action-benchmark's customBiggerIsBetter) and
// bmf.json (Bencher Metric Format). Each format is a file in runner/src/regression/reports/ and
// a line in its registry. Rendering is pure.

#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/regression/history.h"
#include "contend/runner/regression/verdict.h"

namespace contend::runner {

// What the reports are of: a comparison (the latest run, its reference, the verdicts) or a
// history (its latest run is the one the benchmark files carry).
struct CiReportInput {
  const Summary* now = nullptr;  // required
  const std::vector<Verdict>* verdicts = nullptr;
  const History* history = nullptr;
  VerdictOptions options;
  std::string reference;  // what the verdicts compare with: a path, or "the history"
};

struct CiReport {
  std::string file;     // "junit.xml"
  std::string content;  // the rendered text
};
std::vector<CiReport> render_ci_reports(const CiReportInput& in);
// Every report into `dir` (created), replacing files of the same names.
Result<void> write_ci_reports(const std::string& dir, const CiReportInput& in);

// The name a cell is reported under: "experiment/scenario/schedule".
std::string ci_cell_name(const Summary& s, const std::string& scenario, const std::string& schedule);

}  // namespace contend::runner
