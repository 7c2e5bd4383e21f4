#pragma once
// `contend report DIR`: the figures and index.html of a results directory, drawn by
// reports/contend_report.py (Python, matplotlib).

#include <CLI/CLI.hpp>
#include <string>

namespace contend::tools {

// The Python that draws: $CONTEND_PYTHON, else Debian's python3 (where apt puts matplotlib), else
// python3 on PATH; and a script of reports/ ($CONTEND_REPORTS_DIR, else the shipped folder).
std::string report_python();
std::string report_script(const std::string& name);

std::function<int()> add_report_command(CLI::App& sub);

}  // namespace contend::tools
