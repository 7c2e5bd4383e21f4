#pragma once
// `contend sim`: simulate schedules on a uniform pipeline and print, side by side, makespan,
// throughput, bubble and memory; optionally write contend.sim/1 JSON, the schedule CSV and a
// Chrome trace.

#include <CLI/CLI.hpp>

namespace contend::tools {

// Adds the subcommand to `app`; the returned function runs it after parsing and returns the exit
// code.
std::function<int()> add_sim_command(CLI::App& sub);

}  // namespace contend::tools
