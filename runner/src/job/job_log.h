#pragma once
// A command job's rank log (docs/own-job.md#the-rank-logs): every line the rank's processes wrote
// to stdout or stderr, as it was read, after the steady clock's time (the scenario's clock's
// base, as the events log's "steady_s") and the stream:
//   1234.567890 out {"schema": "contend.step/1", "samples": 32, "seconds": 0.41}
//   1234.601223 err [rank0]: warning: ...
// The guard's own lines (its failure line, a command that could not start) are on a third stream,
// "guard", that nothing the job prints can be written as:
//   1234.702113 guard contend job-rank: the command exited with 7 (code 7, at ... on the system clock)
// Written by `contend job-rank` (rank_guard.h), read here into the steps the job reported.
// Pure but for the functions given a file's path, which read it (write_job_steps also writes one).
// Thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/experiment/command_job.h"
#include "results/throughput.h"

namespace contend::runner {

// A line longer than this is written in pieces of it (a runaway line is not held in memory).
inline constexpr std::size_t kMaxLogLine = 64 * 1024;

// Where a rank log line came from: the command's stdout or stderr, or its guard.
enum class LogStream { kOut, kErr, kGuard };

// One rank log line for `text` (without its newline) read at `steady_s` from `stream`.
std::string log_line(double steady_s, LogStream stream, std::string_view text);

// How a rank's command failed by itself: its exit code (128 + signal), and when, on the steady
// clock and on the system clock (seconds since the epoch: the hosts of a cluster run agree on it,
// each within contend_max_clock_offset_ms of the control node's).
struct CommandFailure {
  int code = 0;
  double steady_s = 0;
  double system_s = 0;
};

// The line a guard writes to its rank log (on its own stream) as soon as its command failed or
// could not start ("... the command exited with 7 (code 7, at 1764806400.250000 on the system
// clock)"; what the command's processes still print follows it), and the last such line of a
// log, read back (nullopt: none, or the log cannot be read).
std::string failure_line(const CommandFailure& failure);
std::optional<CommandFailure> command_failure(const std::string& log_path);

// Of the `ranks` rank logs of a cell whose log is `cell_log` (rank_log_path), the rank whose
// failure line is earliest by the system clock, with it; nullopt when no log has one. The runner
// names the rank that failed first by it: its peers fail milliseconds later, and their guards may
// end before its own (on one host), or their hosts report first (--hosts). One clock for both:
// only a step of the system clock between two failures (chrony slews it, stepping it rarely)
// could put them out of order.
struct RankFailure {
  int rank = 0;
  CommandFailure failure;
};
std::optional<RankFailure> first_failure(const std::string& cell_log, int ranks);

// The steps rank `job.output_rank`'s log reports, as intervals of the steady clock: a step with
// its own time ends when its line was read; a rate-only step (torchtitan's) covers the time since
// the previous step's line (the first such step, with nothing before it, is left out). kNotFound
// naming the log when it cannot be read; lines not in the log's form are skipped.
Result<std::vector<Interval>> job_steps(const std::string& log_path, const OutputSpec& output);

// The rank log of rank `rank` of a cell whose log is `cell_log` ("runs/ID.log" -> "runs/ID.rank2.log").
std::string rank_log_path(const std::string& cell_log, int rank);

// A command cell's throughput in its output's unit: the output rank's steps after the warm-up (or
// within the measure window), at least `job.steps` of them, on the scenario's clock from the
// events log. The error says how many steps the parser found and, when none, that it matched no
// line of the log.
Result<double> job_throughput(const CommandJob& job, const std::string& cell_log,
                              const std::optional<MeasureWindow>& window, const std::string& events_path);

// runs/ID.steps.jsonl of a measured command cell, for the report and for users: one record per
// step the output rank reported, {"t_s": its start on the scenario's clock, "seconds", "amount",
// "rate": amount / seconds}, warm-up steps included.
Result<void> write_job_steps(const CommandJob& job, const std::string& cell_log, const std::string& events_path,
                             const std::string& out_path);
std::string job_steps_path(const std::string& cell_log);  // "runs/ID.log" -> "runs/ID.steps.jsonl"
std::string job_out_dir(const std::string& cell_log);     // "runs/ID.log" -> "runs/ID.out" ({out})

}  // namespace contend::runner
