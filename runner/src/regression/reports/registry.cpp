#include "regression/reports/registry.h"

#include <filesystem>

#include "contend/common/fd.h"

namespace contend::runner {
namespace ci_reports {

const std::vector<Format>& formats() {
  static const std::vector<Format> all = {
      {"junit.xml", junit},
      {"summary.md", markdown},
      {"benchmark.json", github_benchmark},
      {"bmf.json", bencher_bmf},
  };
  return all;
}

}  // namespace ci_reports

std::vector<CiReport> render_ci_reports(const CiReportInput& in) {
  std::vector<CiReport> out;
  for (const ci_reports::Format& f : ci_reports::formats()) {
    out.push_back({f.file, f.render(in)});
  }
  return out;
}

Result<void> write_ci_reports(const std::string& dir, const CiReportInput& in) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(Errc::kIo, "create " + dir + ": " + ec.message());
  }
  for (const CiReport& r : render_ci_reports(in)) {
    if (auto ok = write_file_atomic(dir + "/" + r.file, r.content); !ok) {
      return ok;
    }
  }
  return {};
}

std::string ci_cell_name(const Summary& s, const std::string& scenario, const std::string& schedule) {
  return s.experiment + "/" + scenario + "/" + schedule;
}

}  // namespace contend::runner
