#pragma once
// `contend emu host`: a cluster host's share of a scenario (hosts mode, ansible/): shape this
// host's interface per peer and replay the timeline for its own links; `--down` removes a tree a
// crashed run left.

#include <CLI/CLI.hpp>

namespace contend::tools {

// Adds `host` under `emu`; the returned function runs it when it was parsed (else returns -1).
std::function<int()> add_emu_host_command(CLI::App& emu);

}  // namespace contend::tools
