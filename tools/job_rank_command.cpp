#include "job_rank_command.h"

#include <memory>

#include "contend/runner/job/rank_guard.h"
#include "signals.h"

namespace contend::tools {

std::function<int()> add_job_rank_command(CLI::App& sub) {
  auto o = std::make_shared<runner::RankGuardOptions>();
  sub.add_option("--log", o->log, "The rank log to append the command's timestamped output to (created 0644)")
      ->required();
  sub.add_option("--cwd", o->working_dir, "The folder the command starts in (default: this one)");
  sub.add_option("command", o->command, "The rank's command and its arguments, after --")->required();
  sub.footer(
      "Every line the command writes is appended to the log as \"SECONDS out|err TEXT\", SECONDS on the "
      "monotonic clock the scenario player's events use (docs/own-job.md#the-rank-logs). When the command "
      "ends, or on SIGINT/SIGTERM, every process it started is ended (SIGTERM, SIGKILL after 1.5 s). Exit "
      "code: the command's (128 + signal when a signal ended it), 127 when it could not start, 130 when "
      "stopped.");
  return [o] { return runner::run_rank_guard(*o, install_stop_handlers()); };
}

}  // namespace contend::tools
