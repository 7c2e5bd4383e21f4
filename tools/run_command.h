#pragma once
// `contend run EXPERIMENT`: every scenario x schedule x repetition of an experiment, for real in
// network namespaces (root) or in the simulator (--simulate), into a results directory that is
// never overwritten; a summary table at the end; --compare for CI regression checks.

#include <CLI/CLI.hpp>

namespace contend::tools {

std::function<int()> add_run_command(CLI::App& sub);

}  // namespace contend::tools
