#include "job/job_log.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <utility>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"

namespace contend::runner {
namespace {

// How a guard's failure line begins (failure_line).
constexpr std::string_view kFailed = "contend job-rank: the command ";
// ... and goes on: "exited with 7 (code 7, at 1764806400.250000 on the system clock)".
constexpr std::string_view kFailedCode = " (code ";
constexpr std::string_view kFailedTime = ", at ";
constexpr std::string_view kFailedEnd = " on the system clock)";

// The decimal number `text` is, whole (no sign, space or hex); nullopt for anything else.
std::optional<double> whole_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || text.front() == '-' || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

struct LogLine {
  double steady_s = 0;
  std::string_view text;
  LogStream stream = LogStream::kOut;
};

constexpr std::pair<std::string_view, LogStream> kStreams[] = {
    {"out", LogStream::kOut}, {"err", LogStream::kErr}, {"guard", LogStream::kGuard}};

// "<seconds> out|err|guard <text>"; nullopt for anything else.
std::optional<LogLine> read_log_line(std::string_view line) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space > 32) {
    return std::nullopt;
  }
  const auto t = whole_number(line.substr(0, space));
  if (!t) {
    return std::nullopt;
  }
  const std::string_view rest = line.substr(space + 1);
  for (const auto& [stream, kind] : kStreams) {
    if (rest.substr(0, stream.size()) == stream && (rest.size() == stream.size() || rest[stream.size()] == ' ')) {
      return LogLine{*t, rest.size() == stream.size() ? std::string_view() : rest.substr(stream.size() + 1), kind};
    }
  }
  return std::nullopt;
}

// A failure_line, read back; nullopt for any other line (one on stdout or stderr is the job's own,
// whatever it says).
std::optional<CommandFailure> read_failure(std::string_view line) {
  const auto read = read_log_line(line);
  if (!read || read->stream != LogStream::kGuard || read->text.substr(0, kFailed.size()) != kFailed ||
      read->text.size() < kFailedEnd.size() || read->text.substr(read->text.size() - kFailedEnd.size()) != kFailedEnd) {
    return std::nullopt;
  }
  const std::string_view text = read->text.substr(0, read->text.size() - kFailedEnd.size());
  const std::size_t code_at = text.rfind(kFailedCode);
  const std::size_t time_at = text.rfind(kFailedTime);
  if (code_at == std::string_view::npos || time_at == std::string_view::npos || time_at < code_at) {
    return std::nullopt;
  }
  const std::size_t code_from = code_at + kFailedCode.size();
  const auto code = whole_number(text.substr(code_from, time_at - code_from));
  const auto system_s = whole_number(text.substr(time_at + kFailedTime.size()));
  if (!code || !system_s || !(*code >= 1 && *code <= 255) || *code != std::floor(*code)) {
    return std::nullopt;
  }
  return CommandFailure{static_cast<int>(*code), read->steady_s, *system_s};
}

}  // namespace

std::string log_line(double steady_s, LogStream stream, std::string_view text) {
  const auto named =
      std::find_if(std::begin(kStreams), std::end(kStreams), [&](const auto& s) { return s.second == stream; });
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%.6f %s ", steady_s, named->first.data());
  std::string out(stamp);
  out.append(text);
  out += '\n';
  return out;
}

std::string failure_line(const CommandFailure& failure) {
  char at[48];
  std::snprintf(at, sizeof at, "%.6f", failure.system_s);
  return log_line(failure.steady_s, LogStream::kGuard,
                  std::string(kFailed) + ending(failure.code) + std::string(kFailedCode) +
                      std::to_string(failure.code) + std::string(kFailedTime) + at + std::string(kFailedEnd));
}

std::optional<CommandFailure> command_failure(const std::string& log_path) {
  std::ifstream in(log_path);
  std::optional<CommandFailure> last;
  for (std::string line; std::getline(in, line);) {
    if (auto failure = read_failure(line)) {
      last = failure;
    }
  }
  return last;
}

std::optional<RankFailure> first_failure(const std::string& cell_log, int ranks) {
  std::optional<RankFailure> out;
  for (int r = 0; r < ranks; ++r) {
    if (auto failure = command_failure(rank_log_path(cell_log, r));
        failure && (!out || failure->system_s < out->failure.system_s)) {
      out = RankFailure{r, *failure};
    }
  }
  return out;
}

Result<std::vector<Interval>> job_steps(const std::string& log_path, const OutputSpec& output) {
  std::ifstream in(log_path);
  if (!in) {
    return make_error(Errc::kNotFound, log_path + ": cannot read the rank's log");
  }
  const auto parser = make_output_parser(output);
  std::vector<Interval> out;
  double previous = -1;  // the steady time of the last step's line
  for (std::string line; std::getline(in, line);) {
    const auto read = read_log_line(line);
    if (!read) {
      continue;
    }
    const auto step = parser->parse(read->text);
    if (!step) {
      continue;
    }
    if (step->seconds > 0) {
      out.push_back({read->steady_s - step->seconds, step->seconds, step->amount});
    } else if (previous >= 0 && read->steady_s > previous) {
      // Timed by the lines' stamps: since the previous step's line.
      const double seconds = read->steady_s - previous;
      const double amount = step->rate > 0 ? step->rate * seconds : step->amount;
      if (amount > 0 && std::isfinite(amount)) {
        out.push_back({previous, seconds, amount});
      }
    }
    previous = read->steady_s;
  }
  return out;
}

namespace {

// "runs/ID.log" -> "runs/ID"
std::string log_stem(const std::string& cell_log) {
  return cell_log.size() > 4 && cell_log.substr(cell_log.size() - 4) == ".log" ? cell_log.substr(0, cell_log.size() - 4)
                                                                               : cell_log;
}

}  // namespace

std::string rank_log_path(const std::string& cell_log, int rank) {
  return log_stem(cell_log) + ".rank" + std::to_string(rank) + ".log";
}

std::string job_steps_path(const std::string& cell_log) {
  return log_stem(cell_log) + ".steps.jsonl";
}

std::string job_out_dir(const std::string& cell_log) {
  return log_stem(cell_log) + ".out";
}

Result<void> write_job_steps(const CommandJob& job, const std::string& cell_log, const std::string& events_path,
                             const std::string& out_path) {
  auto steps = job_steps(rank_log_path(cell_log, job.output_rank), job.output);
  auto clock = scenario_clock(events_path);
  if (!steps || !clock) {
    return steps ? clock.error() : steps.error();
  }
  std::string text;
  for (const Interval& step : *steps) {
    nlohmann::ordered_json j;
    j["t_s"] = step.start_s - clock->zero_s;
    j["seconds"] = step.seconds;
    j["amount"] = step.amount;
    j["rate"] = step.amount / step.seconds;
    text += j.dump() + "\n";
  }
  return write_file_atomic(out_path, text);
}

Result<double> job_throughput(const CommandJob& job, const std::string& cell_log,
                              const std::optional<MeasureWindow>& window, const std::string& events_path) {
  const std::string log = rank_log_path(cell_log, job.output_rank);
  auto steps = job_steps(log, job.output);
  if (!steps) {
    return steps.error();
  }
  if (steps->empty()) {
    return make_error(Errc::kParse, "rank " + std::to_string(job.output_rank) + ": the \"" + job.output.parser +
                                        "\" parser matched no line of " + log +
                                        " (is that the job's output format? docs/own-job.md#output-parsers)");
  }
  std::vector<Interval> counted = *steps;
  if (!window) {
    const std::size_t skip = std::min(counted.size(), static_cast<std::size_t>(job.warmup));
    counted.erase(counted.begin(), counted.begin() + static_cast<std::ptrdiff_t>(skip));
  }
  return measured_throughput(counted, static_cast<std::size_t>(job.steps), window, events_path,
                             log + " (rank " + std::to_string(job.output_rank) + ", " + std::to_string(steps->size()) +
                                 " steps parsed, " + std::to_string(job.warmup) + " of them warm-up)");
}

}  // namespace contend::runner
