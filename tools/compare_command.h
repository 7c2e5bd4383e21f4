#pragma once
// `contend compare NOW REFERENCE`: the regression verdict of one run against another
// (runner/regression/verdict.h), printed, in CI reports on request, exit 3 on a loss that
// matters. `contend run --compare` and `contend history` share its options and printing.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/regression/verdict.h"

namespace contend::tools {

// "5%" or "0.05" -> 0.05 (a bare 1 is refused: meant as 1% more often than as 100%).
Result<double> parse_fraction(const std::string& text);

// The options of a verdict as typed: --tolerance, --by (or run's --compare-by), --reports.
struct VerdictArgs {
  std::string tolerance = "2%";
  std::string by;  // "throughput" or "speedup"; empty: what the reference summary compares
  std::string reports;
};
void add_tolerance_option(CLI::App* app, VerdictArgs& a);
CLI::Option* add_by_option(CLI::App* app, VerdictArgs& a, const std::string& name);
void add_reports_option(CLI::App* app, VerdictArgs& a);
// The options parsed; `compared` is what the reference says it compares.
Result<runner::VerdictOptions> verdict_options(const VerdictArgs& a, bool compared_throughput);

// Prints the verdicts of `now` against the reference runs (named `reference_name`), writes the CI
// reports when asked; 3 when a cell fails, 1 when the reports cannot be written, else 0.
int report_verdicts(const runner::Summary& now, const std::vector<runner::Summary>& references,
                    const std::string& reference_name, const runner::VerdictOptions& o, const std::string& reports_dir);

std::function<int()> add_compare_command(CLI::App& sub);

}  // namespace contend::tools
