#pragma once
// `contend list`: every schedule, policy, compute backend and transport this build knows, as
// their registries declare them (syntax, help, parameters), and the optional parts not built.

#include <CLI/CLI.hpp>

namespace contend::tools {

std::function<int()> add_list_command(CLI::App& sub);

}  // namespace contend::tools
