#pragma once
// `contend ab EXPERIMENT --base OLD_CONTEND --out DIR`: an A/B comparison of two builds (or two
// experiments) run alternately on this machine, round by round, then judged as `contend compare`
// judges two runs: the machine's drift between runs falls on both sides alike.

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

std::function<int()> add_ab_command(CLI::App& sub);

}  // namespace contend::tools
