#pragma once
// `contend emu up|play|down|status`: the emulated network of a scenario on this host.

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

// Adds the subcommand to `app`; the returned function runs whichever of up/play/down/status was
// given and returns the exit code.
std::function<int()> add_emu_command(CLI::App& sub);

}  // namespace contend::tools
