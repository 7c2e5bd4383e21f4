#pragma once
// `contend emu predict`: a fabric's flows at the flow level, without root (fabric_flows.h): every
// flow's path and max-min share at a time of the scenario, and the ports' loads.

#include <CLI/CLI.hpp>

namespace contend::tools {

// Adds `predict` under `emu`; the returned function runs it when it was parsed (else returns -1).
std::function<int()> add_emu_predict_command(CLI::App& emu);

}  // namespace contend::tools
