#include "report_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "data_dir.h"

namespace contend::tools {
namespace {

struct ReportOptions {
  std::string results;
  std::string out;
};

int run(const ReportOptions& o) {
  const std::string script = report_script("contend_report.py");
  if (!std::filesystem::exists(script)) {
    std::fprintf(stderr, "contend report: %s not found (set CONTEND_REPORTS_DIR to the reports/ folder)\n",
                 script.c_str());
    return 1;
  }
  const std::string py = report_python();
  std::vector<std::string> args = {py, script, o.results};
  if (!o.out.empty()) {
    args.push_back("--out");
    args.push_back(o.out);
  }
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "contend report: cannot run %s: %s\n", py.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

std::string report_script(const std::string& name) {
  return data_path("CONTEND_REPORTS_DIR", "reports") + "/" + name;
}

std::string report_python() {
  if (const char* p = std::getenv("CONTEND_PYTHON")) {
    return p;
  }
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

std::function<int()> add_report_command(CLI::App& sub) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* r = &sub;
  r->add_option("results", o->results, "Results directory (summary.json, runs/, events/, traces/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  r->add_option("--out", o->out, "Where to write the figures (default RESULTS/report)");
  return [o] { return run(*o); };
}

}  // namespace contend::tools
