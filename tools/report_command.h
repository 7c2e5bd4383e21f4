#pragma once
// `contend report DIR`: the figures and index.html of a results directory, drawn by
// reports/contend_report.py (Python, matplotlib).

#include <CLI/CLI.hpp>

namespace contend::tools {

std::function<int()> add_report_command(CLI::App& sub);

}  // namespace contend::tools
