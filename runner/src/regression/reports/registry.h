#pragma once
// The CI report formats: each renders a CiReportInput into its file's text.

#include <string>
#include <vector>

#include "contend/runner/regression/ci_reports.h"

namespace contend::runner::ci_reports {

struct Format {
  const char* file;
  std::string (*render)(const CiReportInput& in);
};
const std::vector<Format>& formats();

std::string junit(const CiReportInput& in);
std::string markdown(const CiReportInput& in);
std::string github_benchmark(const CiReportInput& in);
std::string bencher_bmf(const CiReportInput& in);

}  // namespace contend::runner::ci_reports
