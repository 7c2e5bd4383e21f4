#pragma once
// `contend worker`: one pipeline stage, over TCP. Rank, world size and peers come from flags or
// the environment (CONTEND_RANK, CONTEND_WORLD_SIZE, CONTEND_PEERS), as torchrun users expect.

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

std::function<int()> add_worker_command(CLI::App& sub);

}  // namespace contend::tools
