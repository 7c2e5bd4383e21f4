#include "results/throughput.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "contend/common/json.h"
#include "contend/common/units.h"

namespace contend::runner {

namespace {

// Rank 0's iterations as intervals of the samples each carries.
std::vector<Interval> intervals_of(const std::vector<std::pair<double, double>>& its, const Workload& w) {
  std::vector<Interval> out;
  out.reserve(its.size());
  for (const auto& [start, seconds] : its) {
    out.push_back({start, seconds, w.samples_per_iteration()});
  }
  return out;
}

// `rate`, when it is a finite number: a step's reported amount can be anything (1.5e308), and a
// throughput that is not finite would print "inf" and be written as null.
Result<double> finite(double rate, const std::string& what) {
  if (!std::isfinite(rate)) {
    return make_error(Errc::kInvalidArgument,
                      what + ": the throughput measured is not a finite number (does a step report an absurd amount?)");
  }
  return rate;
}

// A measured interval that ended after the scenario did ran on a network the scenario does not
// describe (its last state, held): the cell is refused.
Result<void> within_scenario(const std::vector<Interval>& counted, const ScenarioClock& clock,
                             const std::string& path) {
  constexpr double kSlack = 0.05;  // s: the player's end line and the last iteration's end
  double last = 0;
  for (const Interval& i : counted) {
    last = std::max(last, i.start_s + i.seconds - clock.zero_s);
  }
  if (clock.duration_s <= 0 || last <= clock.duration_s + kSlack) {
    return {};
  }
  return make_error(Errc::kInvalidArgument, path + ": the measured iterations (a job's steps) ran until " +
                                                format_seconds(last) + " of the scenario's clock, past its duration (" +
                                                format_seconds(clock.duration_s) +
                                                "): the network after it is not one the scenario describes; "
                                                "lengthen the scenario's duration or run fewer of them");
}

// A step that began before the scenario's time 0 was not timed on the player's clock (a stale
// log, another clock): the cell is refused. A second of slack: a step's own start is its end less
// the time it reports.
Result<void> after_start(const std::vector<Interval>& counted, const ScenarioClock& clock, const std::string& path) {
  constexpr double kSlack = 1.0;
  for (const Interval& i : counted) {
    if (i.start_s - clock.zero_s < -kSlack) {
      return make_error(Errc::kInvalidArgument, path + ": a step began at " + format_seconds(i.start_s - clock.zero_s) +
                                                    " of the scenario's clock, before the scenario started: it was "
                                                    "not timed on the player's clock (a log left from another run?)");
    }
  }
  return {};
}

Result<double> window_throughput(const std::vector<Interval>& counted, const MeasureWindow& window, double zero,
                                 const std::string& path) {
  double amount = 0;
  double first = std::numeric_limits<double>::infinity();
  double last = 0;
  for (const Interval& i : counted) {
    const double start = i.start_s - zero;
    first = std::min(first, start);
    last = std::max(last, start + i.seconds);
    const double inside = std::min(start + i.seconds, window.to_s) - std::max(start, window.from_s);
    if (inside > 0 && i.seconds > 0) {
      amount += i.amount * inside / i.seconds;
    }
  }
  if (counted.empty() || first > window.from_s || last < window.to_s) {
    return make_error(Errc::kInvalidArgument,
                      path + ": the measured iterations (a job's steps) ran from " +
                          format_seconds(counted.empty() ? 0 : first) + " to " + format_seconds(last) +
                          " of the scenario's clock, not over the measure window (" + format_seconds(window.from_s) +
                          " to " + format_seconds(window.to_s) +
                          "): run more of them (the workload's iterations, or the job's own step count) or "
                          "narrow the window");
  }
  return finite(amount / (window.to_s - window.from_s), path);
}

// When an interval ended: for a job's step, when its line was read.
double end_of(const Interval& i) {
  return i.start_s + i.seconds;
}

// The intervals in the order their lines were read (by their ends), each reported twice counted
// once (a launcher that merges its ranks' output, as mpirun does, prints the same step line twice:
// the same length and amount, read within a tenth of it), said on stderr.
std::vector<Interval> without_repeats(std::vector<Interval> counted, const std::string& what) {
  std::stable_sort(counted.begin(), counted.end(),
                   [](const Interval& a, const Interval& b) { return end_of(a) < end_of(b); });
  std::vector<Interval> out;
  std::size_t repeats = 0;
  for (const Interval& i : counted) {
    const bool same = !out.empty() && std::abs(i.seconds - out.back().seconds) <= 1e-6 * std::max(1.0, i.seconds) &&
                      i.amount == out.back().amount && end_of(i) - end_of(out.back()) <= 0.1 * i.seconds;
    if (same) {
      ++repeats;
    } else {
      out.push_back(i);
    }
  }
  if (repeats > 0) {
    std::fprintf(stderr, "contend run: %s: %zu steps were reported twice (merged output?); each is counted once\n",
                 what.c_str(), repeats);
  }
  return out;
}

// One process's steps, laid one after another. A step's interval ends when its line was read, which
// is its true end or later: a reader that waited for a busy CPU reads the lines written meanwhile
// at once, and a line read late puts its step into the next. A step that starts a little into the
// one before (up to a quarter of the shorter: stamp jitter, a time rounded up) starts where it
// ended. Then, from the last line back, each step ends at the earlier of its line's read and the
// next step's start. A step so moved back was read late, and the pipe is read in order, all it
// holds at each read: a later line whose step had ended before that read was read with it (the
// guard stamps a read's lines at once; kSameRead for what comes between). Steps of two processes
// in one log cannot be laid so and are refused, as their work would be counted on top of each other.
Result<std::vector<Interval>> in_sequence(std::vector<Interval> steps, const std::string& what) {
  constexpr double kSameRead = 0.005;  // s
  std::vector<double> read(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    read[i] = end_of(steps[i]);
  }
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const double overlap = read[i - 1] - steps[i].start_s;
    if (overlap > 0 && overlap <= 0.25 * std::min(steps[i - 1].seconds, steps[i].seconds)) {
      steps[i].start_s += overlap;
      steps[i].seconds -= overlap;
    }
  }
  for (std::size_t i = steps.size(); i-- > 1;) {
    Interval& before = steps[i - 1];
    before.start_s = std::min(end_of(before), steps[i].start_s) - before.seconds;
    if (end_of(steps[i]) < read[i - 1] - kSameRead && read[i] - read[i - 1] > kSameRead) {
      return make_error(Errc::kInvalidArgument,
                        what + ": two steps overlap as one process's cannot (a step of " +
                            format_seconds(steps[i].seconds) + " ended " +
                            format_seconds(read[i - 1] - end_of(steps[i])) +
                            " before the line of the step before it was read, yet its own line was read " +
                            format_seconds(read[i] - read[i - 1]) +
                            " after that one): their work would be counted "
                            "twice; read one rank's steps (output_rank), or a log where each step is printed once");
    }
  }
  return steps;
}

}  // namespace

Result<double> first_iteration_s(const IterationLog& log, double zero_s) {
  const auto its = log.rank0(0);
  if (!its) {
    return its.error();
  }
  if (its->empty()) {
    return make_error(Errc::kParse, log.path + ": no iteration of rank 0");
  }
  return its->front().first - zero_s;
}

Result<ScenarioClock> scenario_clock(const std::string& events_path) {
  std::ifstream in(events_path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return make_error(Errc::kNotFound, events_path + ": cannot read the scenario's start from the events log");
  }
  const auto parsed = parse_json(line, events_path);
  const nlohmann::json j = parsed ? *parsed : nlohmann::json();
  if (!j.is_object() || !j.contains("steady_s") || !j["steady_s"].is_number()) {
    return make_error(Errc::kParse, events_path + ": the first line is not the player's start line with steady_s");
  }
  const bool has_duration = j.contains("duration_s") && j["duration_s"].is_number();
  return ScenarioClock{j["steady_s"].get<double>(), has_duration ? j["duration_s"].get<double>() : 0.0};
}

Result<double> intervals_throughput(const std::vector<Interval>& counted, const std::optional<MeasureWindow>& window,
                                    double zero, std::size_t at_least, const std::string& what) {
  if (window) {
    return window_throughput(counted, *window, zero, what);
  }
  double first_start = -1;
  double last_end = 0;
  double amount = 0;
  for (const Interval& i : counted) {
    if (first_start < 0 || i.start_s < first_start) {
      first_start = i.start_s;
    }
    last_end = std::max(last_end, i.start_s + i.seconds);
    amount += i.amount;
  }
  if (counted.size() < at_least || counted.empty() || last_end <= first_start) {
    return make_error(Errc::kParse, what + ": " + std::to_string(counted.size()) + " measured (iterations of rank 0, " +
                                        "or steps of a job), expected at least " + std::to_string(at_least));
  }
  return finite(amount / (last_end - first_start), what);
}

Result<double> iterations_throughput(const std::vector<std::pair<double, double>>& its, const Workload& w,
                                     const std::optional<MeasureWindow>& window, double zero, const std::string& what) {
  return intervals_throughput(intervals_of(its, w), window, zero, static_cast<std::size_t>(w.iterations), what);
}

Result<double> measured_throughput(const std::vector<Interval>& counted, std::size_t at_least,
                                   const std::optional<MeasureWindow>& window, const std::string& events_path,
                                   const std::string& what) {
  ScenarioClock clock;
  if (window || !events_path.empty()) {
    auto c = scenario_clock(events_path);
    if (!c) {
      return c.error();
    }
    clock = *c;
  }
  // A window lies within every scenario (parse_experiment checks it), and only what falls in it
  // counts: the intervals after it may outlast the scenario. Without one, every one counted must
  // have run on the scenario's network.
  if (!window) {
    if (auto ok = within_scenario(counted, clock, what); !ok) {
      return ok.error();
    }
  }
  if (!events_path.empty()) {
    if (auto ok = after_start(counted, clock, what); !ok) {
      return ok.error();
    }
  }
  auto once = in_sequence(without_repeats(counted, what), what);
  if (!once) {
    return once.error();
  }
  return intervals_throughput(*once, window, clock.zero_s, at_least, what);
}

IterationSpread iteration_spread(const IterationLog& log, const Workload& w) {
  const auto counted = log.rank0(w.warmup);
  const auto its = counted ? *counted : std::vector<std::pair<double, double>>();
  IterationSpread s;
  std::vector<double> seconds;
  for (std::size_t i = 0; i < its.size(); ++i) {
    seconds.push_back(its[i].second);
    if (its[i].second > s.slowest_s) {
      s.slowest_s = its[i].second;
      s.slowest = w.warmup + static_cast<int>(i);
    }
  }
  if (!seconds.empty()) {
    std::nth_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2), seconds.end());
    s.median_s = seconds[seconds.size() / 2];
  }
  return s;
}

Result<double> cell_throughput(const IterationLog& log, const Workload& w, const std::optional<MeasureWindow>& window,
                               const std::string& events_path) {
  auto its = log.rank0(window ? 0 : w.warmup);
  if (!its) {
    return its.error();
  }
  return measured_throughput(intervals_of(*its, w), static_cast<std::size_t>(w.iterations), window, events_path,
                             log.path);
}

}  // namespace contend::runner
