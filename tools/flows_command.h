#pragma once
// `contend flows JOB --run NAME`: background flows (contend.flow-job/1) against a run that is up.

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

std::function<int()> add_flows_command(CLI::App& sub);

}  // namespace contend::tools
