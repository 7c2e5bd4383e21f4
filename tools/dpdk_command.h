#pragma once
// `contend dpdk-source`: the DPDK flow source between two nodes of a run (CONTEND_WITH_DPDK).

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

std::function<int()> add_dpdk_command(CLI::App& sub);

}  // namespace contend::tools
