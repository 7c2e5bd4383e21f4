#pragma once
// `contend job-rank`: the guard the runner starts for each rank of a user's job, inside the rank's
// node namespace (runner/job/rank_guard.h): it runs the rank's command, timestamps every line of its
// output into the rank log and ends the rank's whole process tree when the command ends or the
// guard is stopped. Run by `contend run`; by hand only to try a command the way a cell runs it.

#include <CLI/CLI.hpp>
#include <functional>

namespace contend::tools {

std::function<int()> add_job_rank_command(CLI::App& sub);

}  // namespace contend::tools
