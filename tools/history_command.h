#pragma once
// `contend history RUNS...`: the series of many runs of one experiment on one machine, per cell,
// with its change points (runner/regression/history.h), in CI reports and a figure on request;
// exit 3 when a cell's latest change point is a loss.

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

std::function<int()> add_history_command(CLI::App& sub);

}  // namespace contend::tools
