#include "contend/runner/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <thread>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/units.h"
#include "contend/emulator/emulated_run.h"
#include "contend/runner/traffic.h"

namespace contend::runner {
namespace {

std::string seconds_text(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) + "us";
}

// Rank r's address: its end of the link from node r-1 (node 0: its end of the link to node 1).
Result<std::vector<std::string>> rank_addresses(const emulator::Scenario& s, const emulator::TopologyPlan& plan) {
  std::vector<std::string> out;
  for (std::size_t r = 0; r < s.nodes.size(); ++r) {
    const std::string& other = s.nodes[r == 0 ? 1 : r - 1];
    std::string address;
    for (const auto& l : plan.links) {
      for (const auto* end : {&l.from, &l.to}) {
        const auto* peer = end == &l.from ? &l.to : &l.from;
        if (end->node == s.nodes[r] && peer->node == other) {
          address = emulator::strip_prefix_length(end->address);
        }
      }
    }
    if (address.empty()) {
      return make_error(Errc::kInvalidArgument, "no link between " + s.nodes[r] + " and " + other);
    }
    out.push_back(address);
  }
  return out;
}

}  // namespace

std::vector<std::string> worker_options(const Experiment& e, const Cell& cell) {
  const Workload& w = e.workload;
  std::vector<std::string> argv = {"--schedule",        cell.schedule.str(),
                                   "--microbatches",    std::to_string(w.microbatches),
                                   "--iterations",      std::to_string(w.warmup + w.iterations),
                                   "--backend",         w.backend.str(),
                                   "--microbatch-size", std::to_string(w.microbatch_size),
                                   "--seq-len",         std::to_string(w.seq_len),
                                   "--timeout",         "120s"};
  argv.push_back("--transport");
  argv.push_back(w.transport.str());
  if (!pipeline::backends().find(w.backend)->kind.uses_model) {
    for (const std::string& a :
         {std::string("--fwd"), seconds_text(w.forward), std::string("--bwd"), seconds_text(w.backward),
          std::string("--activation"), std::to_string(w.activation_bytes) + "B"}) {
      argv.push_back(a);
    }
  } else {
    for (const std::string& a :
         {std::string("--hidden"), std::to_string(w.hidden), std::string("--layers"), std::to_string(w.layers)}) {
      argv.push_back(a);
    }
  }
  return argv;
}

std::vector<std::vector<std::string>> worker_commands(const Experiment& e, const Cell& cell,
                                                      const std::vector<std::string>& endpoints, const CellFiles& files,
                                                      const LaunchOptions& o, double oracle_start_s) {
  const Workload& w = e.workload;
  std::string peers;
  for (const auto& a : endpoints) {
    peers += (peers.empty() ? "" : ",") + a;
  }
  const std::vector<std::string> common = worker_options(e, cell);
  std::vector<std::vector<std::string>> out;
  for (int r = 0; r < w.stages; ++r) {
    std::vector<std::string> argv = {
        o.contend, "worker", "--rank",    std::to_string(r), "--world-size", std::to_string(w.stages),
        "--peers", peers,    "--metrics", files.metrics};
    argv.insert(argv.end(), common.begin(), common.end());
    if (!files.trace_prefix.empty()) {
      argv.push_back("--trace");
      argv.push_back(files.trace_prefix + ".rank" + std::to_string(r) + ".json");
    }
    if (pipeline::reads_truth(cell.schedule) && r == 0) {
      argv.push_back("--oracle-scenario");
      argv.push_back(e.scenario_files[cell.scenario]);
      argv.push_back("--oracle-start");
      argv.push_back(std::to_string(oracle_start_s));
    }
    out.push_back(std::move(argv));
  }
  return out;
}

std::vector<std::string> worker_environment(const Spec& transport, const emulator::TopologyPlan& plan,
                                            const std::string& node) {
  const auto* kind = pipeline::transports().find(transport);
  if (kind == nullptr || !kind->kind.environment) {
    return {};
  }
  std::vector<std::string> ifnames;
  std::string netns;
  for (const auto& l : plan.links) {
    for (const auto* end : {&l.from, &l.to}) {
      if (end->node == node) {
        ifnames.push_back(end->ifname);
        netns = end->netns;
      }
    }
  }
  return kind->kind.environment(ifnames, netns);
}

namespace {

// Starts every command, their output in `log`.
Result<std::vector<ChildProcess>> spawn_workers(const std::vector<std::vector<std::string>>& commands,
                                                const std::string& log) {
  std::vector<ChildProcess> workers;
  for (const auto& argv : commands) {
    ChildOptions co;
    co.output_path = log;
    auto child = ChildProcess::spawn(argv, co);
    if (!child) {
      return child.error();
    }
    workers.push_back(std::move(*child));
  }
  return workers;
}

// One worker per stage in its node's namespace, with its transport's environment; their output
// in files.log.
Result<std::vector<ChildProcess>> start_workers(const Experiment& e, const Cell& cell, const CellFiles& files,
                                                const LaunchOptions& o, const emulator::TopologyPlan& plan,
                                                const std::vector<std::string>& addresses,
                                                const std::vector<std::vector<std::string>>& reach, double start_s) {
  std::vector<std::string> endpoints;
  for (const auto& a : addresses) {
    endpoints.push_back(a + ":" + std::to_string(o.port));
  }
  auto commands = worker_commands(e, cell, endpoints, files, o, start_s);
  for (int r = 0; r < e.workload.stages; ++r) {
    commands[r].insert(commands[r].end(), reach[r].begin(), reach[r].end());
  }
  for (int r = 0; r < e.workload.stages; ++r) {
    std::vector<std::string> argv = {"ip", "netns", "exec", plan.nodes[r].second};
    if (const auto env = worker_environment(e.workload.transport, plan, plan.nodes[r].first); !env.empty()) {
      argv.push_back("env");
      argv.insert(argv.end(), env.begin(), env.end());
    }
    commands[r].insert(commands[r].begin(), argv.begin(), argv.end());
  }
  return spawn_workers(commands, files.log);
}

// How a worker ended, for people: "exited with 1", "was killed by signal 9".
std::string ending(int code) {
  return code > 128 ? "was killed by signal " + std::to_string(code - 128) : "exited with " + std::to_string(code);
}

// Waits until every worker has ended: an error naming the first that failed (the others usually
// fail because it did, and their errors say so), on `stop`, or at the deadline (the workers are
// killed as they go out of scope).
Result<void> wait_workers(std::vector<ChildProcess>& workers, const Cell& cell, const CellFiles& files,
                          const LaunchOptions& o, const std::atomic<bool>& stop) {
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  for (;;) {
    int running = 0;
    for (std::size_t r = 0; r < workers.size(); ++r) {
      if (!workers[r].running()) {
        continue;
      }
      auto code = workers[r].wait(std::chrono::milliseconds(0));
      if (!code) {
        ++running;
      } else if (*code != 0) {
        return make_error(Errc::kIo, "worker " + std::to_string(r) + " of " + cell.id + " " + ending(*code) +
                                         " (the first to fail); the workers' log " + files.log + " ends:\n" +
                                         file_tail(files.log, 900));
      }
    }
    if (running == 0) {
      return {};
    }
    if (stop.load()) {
      return make_error(Errc::kIo, "stopped");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return make_error(Errc::kTimeout,
                        cell.id + " took longer than " + std::to_string(o.timeout.count()) + " s; see " + files.log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

Result<void> run_cell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o,
                      const std::atomic<bool>& stop) {
  const emulator::Scenario& scenario = e.scenarios[cell.scenario];
  const std::string run = "r" + std::to_string(::getpid() % 100000) + "-" + std::to_string(cell.repetition) +
                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000);
  // The run owner tears the network down whatever happens next, also after a failure half-way.
  auto net = emulator::EmulatedRun::up(scenario, run, e.scenario_files[cell.scenario], &stop);
  if (!net) {
    return net.error();
  }
  auto addresses = rank_addresses(scenario, net->plan());
  if (!addresses) {
    return addresses.error();
  }
  auto log = emulator::EventLog::open(files.events);
  if (!log) {
    return log.error();
  }
  auto pairs = exchange_pairs(e, cell.scenario, cell.schedule);
  if (!pairs) {
    return pairs.error();
  }
  const double start_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  net->play_in_background(std::move(*log), emulator::PlayerOptions{std::chrono::milliseconds(100), true});
  auto workers = start_workers(e, cell, files, o, net->plan(), *addresses, reach_options(*pairs, net->plan(), o.port),
                               start_s);
  if (!workers) {
    return workers.error();
  }
  if (auto ok = wait_workers(*workers, cell, files, o, stop); !ok) {
    return ok;
  }
  if (auto played = net->finish_play(); !played) {
    return with_context(played.error(), cell.id + ": the scenario player");
  }
  return {};
}

Result<void> run_cell_loopback(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o,
                               const std::atomic<bool>& stop) {
  std::vector<std::string> endpoints;
  for (int r = 0; r < e.workload.stages; ++r) {
    endpoints.push_back("127.0.0.1:" + std::to_string(o.port + r));
  }
  auto workers = spawn_workers(worker_commands(e, cell, endpoints, files, o, 0), files.log);
  if (!workers) {
    return workers.error();
  }
  return wait_workers(*workers, cell, files, o, stop);
}

namespace {

// Rank 0's iterations: (start_s, iteration_s) in iteration order, from the iteration log.
Result<std::vector<std::pair<double, double>>> rank0_iterations(const std::string& path, int from_iteration) {
  std::ifstream in(path);
  if (!in) {
    return make_error(Errc::kNotFound, path + ": cannot read the iteration log");
  }
  std::vector<std::pair<double, double>> out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("rank", nlohmann::json()) != 0) {
      continue;  // another rank's line, or not one of the records
    }
    const auto number = [&](const char* key) { return j.contains(key) && j[key].is_number(); };
    if (!number("iteration") || !number("start_s") || !number("iteration_s")) {
      return make_error(Errc::kParse, path + ":" + std::to_string(n) +
                                          ": rank 0's line without a numeric iteration, start_s and iteration_s");
    }
    if (j["iteration"].get<double>() >= from_iteration) {
      out.emplace_back(j["start_s"].get<double>(), j["iteration_s"].get<double>());
    }
  }
  return out;
}

// The steady clock at the scenario's time 0: the events log's start line.
Result<double> scenario_zero(const std::string& events_path) {
  std::ifstream in(events_path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return make_error(Errc::kNotFound, events_path + ": cannot read the scenario's start from the events log");
  }
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("steady_s") || !j["steady_s"].is_number()) {
    return make_error(Errc::kParse, events_path + ": the first line is not the player's start line with steady_s");
  }
  return j["steady_s"].get<double>();
}

Result<double> window_throughput(const std::vector<std::pair<double, double>>& its, const Workload& w,
                                 const MeasureWindow& window, double zero, const std::string& path) {
  double samples = 0;
  double first = std::numeric_limits<double>::infinity();
  double last = 0;
  for (const auto& [start_abs, seconds] : its) {
    const double start = start_abs - zero;
    first = std::min(first, start);
    last = std::max(last, start + seconds);
    const double inside = std::min(start + seconds, window.to_s) - std::max(start, window.from_s);
    if (inside > 0 && seconds > 0) {
      samples += samples_per_iteration(w) * inside / seconds;
    }
  }
  if (its.empty() || first > window.from_s || last < window.to_s) {
    return make_error(Errc::kInvalidArgument,
                      path + ": rank 0 ran from " + format_seconds(its.empty() ? 0 : first) + " to " +
                          format_seconds(last) + " of the scenario's clock, not over the measure window (" +
                          format_seconds(window.from_s) + " to " + format_seconds(window.to_s) +
                          "): raise the workload's iterations or narrow the window");
  }
  return samples / (window.to_s - window.from_s);
}

}  // namespace

Result<double> iterations_throughput(const std::vector<std::pair<double, double>>& its, const Workload& w,
                                     const std::optional<MeasureWindow>& window, double zero, const std::string& what) {
  if (window) {
    return window_throughput(its, w, *window, zero, what);
  }
  double first_start = -1;
  double last_end = 0;
  for (const auto& [start, seconds] : its) {
    if (first_start < 0 || start < first_start) {
      first_start = start;
    }
    last_end = std::max(last_end, start + seconds);
  }
  const int measured = static_cast<int>(its.size());
  if (measured < w.iterations || last_end <= first_start) {
    return make_error(Errc::kParse, what + ": " + std::to_string(measured) + " measured iterations of rank 0, " +
                                        "expected " + std::to_string(w.iterations));
  }
  return measured * samples_per_iteration(w) / (last_end - first_start);
}

Result<double> cell_throughput(const std::string& path, const Workload& w, const std::optional<MeasureWindow>& window,
                               const std::string& events_path) {
  auto its = rank0_iterations(path, window ? 0 : w.warmup);
  if (!its) {
    return its.error();
  }
  double zero = 0;
  if (window) {
    auto z = scenario_zero(events_path);
    if (!z) {
      return z.error();
    }
    zero = *z;
  }
  return iterations_throughput(*its, w, window, zero, path);
}

}  // namespace contend::runner
