#include "worker_command.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_units.h"
#include "commands.h"
#include "contend/common/fd.h"
#include "contend/common/records.h"
#include "contend/common/socket.h"
#include "contend/common/units.h"
#include "contend/pipeline/exec/worker.h"
#include "contend/pipeline/exec/workload.h"
#include "contend/runner/truth/network.h"
#include "contend/schedule/schedule.h"
#include "contend/sim/chrome_trace.h"

namespace contend::tools {
namespace {

// Every option parsed once, as it is read, into what the run takes (cli_units.h: add_parsed).
struct WorkerOptions {
  WorkerOptions() {
    run.workload.emulated.forward = std::chrono::milliseconds(10);
    run.workload.emulated.activation_bytes = 1 << 20;
  }
  pipeline::RunConfig run;
  pipeline::TcpOptions tcp;
  std::string peers;
  std::vector<std::pair<int, std::string>> reach;  // --reach RANK=HOST:PORT
  std::optional<std::chrono::nanoseconds> bwd;     // default 2 x --fwd
  std::optional<pipeline::Workload> workload;      // --workload: every member at once
  std::string metrics;
  std::string trace;
  std::string truth;
  double scenario_start_s = -1;
  bool spin = false;
};

// The network the runner resolved (contend.truth/1): for the oracle at rank 0 each chain link's
// rate, and for every rank the stalls of its links, on a clock whose 0 is `start_s` (steady clock
// seconds, the same in every namespace of a host, the player's time 0; default: now).
Result<void> apply_truth(WorkerOptions& o) {
  auto truth = runner::read_truth(o.truth);
  if (!truth) {
    return truth.error();
  }
  const auto steady_s = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const double zero = o.scenario_start_s >= 0 ? o.scenario_start_s : steady_s();
  pipeline::RunConfig& c = o.run;
  c.scenario_zero_s = zero;
  const int rank = o.tcp.rank;
  for (const auto& [nodes, schedule] : truth->stalls) {
    if (nodes.first == rank || nodes.second == rank) {
      c.stalls[nodes.first == rank ? nodes.second : nodes.first] = schedule;
    }
  }
  if (rank == 0) {  // the truth, where rank 0 decides (the oracle, the observer); other policies ignore it
    std::vector<StallSchedule> stalls;
    for (int r = 0; r + 1 < c.workload.stages; ++r) {
      const auto it = truth->stalls.find({r, r + 1});
      stalls.push_back(it == truth->stalls.end() ? StallSchedule{} : it->second);
    }
    c.oracle = pipeline::OracleTruth{std::move(truth->links), [zero, steady_s] { return steady_s() - zero; },
                                     runner::shaper_burst_bytes, std::move(stalls), std::move(truth->back)};
  }
  return {};
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    out.push_back(item);
  }
  return out;
}

Result<std::chrono::milliseconds> milliseconds_of(const std::string& text) {
  auto d = parse_duration(text);
  if (!d) {
    return d.error();
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

int fail_rank(int rank, const std::string& message) {
  return fail(("worker " + std::to_string(rank)).c_str(), message);
}

// What the options name but could not check alone: the peers of this world, --reach's ranks, the
// backward's default, the oracle's truth.
Result<void> resolve(WorkerOptions& o) {
  auto& c = o.run;
  auto& t = o.tcp;
  if (o.workload) {
    if (o.workload->stages != c.workload.stages) {
      return make_error(Errc::kInvalidArgument, "--workload has " + std::to_string(o.workload->stages) +
                                                    " stages, --world-size says " + std::to_string(c.workload.stages));
    }
    c.workload = *o.workload;
  } else {
    c.workload.emulated.backward = o.bwd ? *o.bwd : 2 * c.workload.emulated.forward;
  }
  t.world_size = c.workload.stages;
  t.peers = split_list(o.peers);
  for (const auto& [rank, where] : o.reach) {
    if (rank >= c.workload.stages) {
      return make_error(Errc::kInvalidArgument, "--reach: rank " + std::to_string(rank) + " is not in a world of " +
                                                    std::to_string(c.workload.stages));
    }
    t.reach[rank] = where;
  }
  auto token = pipeline::run_token_from_environment();
  if (!token) {
    return token.error();
  }
  t.token = *token;
  return o.truth.empty() ? Result<void>() : apply_truth(o);
}

Result<void> write_trace(const WorkerOptions& o, std::vector<sim::TraceEvent> trace) {
  sim::SimResult r;
  r.schedule = o.run.schedule.str();
  r.num_ranks = o.run.workload.stages;
  r.trace = std::move(trace);
  return write_file_atomic(o.trace, sim::chrome_trace_json(r));
}

int run(WorkerOptions& o) {
  const int rank = o.tcp.rank;
  if (auto ok = resolve(o); !ok) {
    return fail_rank(rank, ok.error().message);
  }
  std::unique_ptr<JsonLinesWriter> metrics;
  if (!o.metrics.empty()) {
    // Every rank appends to one file (the runner's); each line is one write.
    auto opened = JsonLinesWriter::open(o.metrics, pipeline::kIterationSchema, JsonLinesWriter::Mode::kAppend);
    if (!opened) {
      return fail_rank(rank, opened.error().message);
    }
    metrics = std::move(*opened);
  }
  std::vector<sim::TraceEvent> trace;
  std::optional<Error> write_error;
  auto done = pipeline::run_worker(
      o.run, o.tcp,
      [&](const pipeline::IterationMetrics& m) {
        if (metrics != nullptr && !write_error) {
          if (auto ok = metrics->write(pipeline::metrics_record(o.run, m)); !ok) {
            write_error = ok.error();
          }
        }
      },
      o.trace.empty() ? nullptr : &trace);
  if (done && write_error) {
    done = *write_error;
  }
  if (done && !o.trace.empty()) {
    done = write_trace(o, std::move(trace));
  }
  return done ? 0 : fail_rank(rank, done.error().message);
}

// --reach RANK=HOST:PORT.
Result<std::pair<int, std::string>> parse_reach(const std::string& item) {
  const auto eq = item.find('=');
  int rank = -1;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + (eq == std::string::npos ? 0 : eq), rank);
  if (eq == std::string::npos || ec != std::errc() || end != item.data() + eq || rank < 0 ||
      !Endpoint::parse(item.substr(eq + 1))) {
    return make_error(Errc::kInvalidArgument, "expected RANK=HOST:PORT, got \"" + item + "\"");
  }
  return std::pair<int, std::string>(rank, item.substr(eq + 1));
}

// --split: layers per stage, "2,3,3".
Result<std::vector<int>> parse_split(const std::string& text) {
  std::vector<int> out;
  for (const std::string& n : split_list(text)) {
    int layers = 0;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), layers);
    if (n.empty() || ec != std::errc() || end != n.data() + n.size() || layers < 1) {
      return make_error(Errc::kInvalidArgument, "expected whole numbers >= 1 separated by commas, got \"" + n + "\"");
    }
    out.push_back(layers);
  }
  return out;
}

}  // namespace

namespace {

// Who this rank is and whom it talks to, and how.
void add_network_options(CLI::App* w, WorkerOptions* o) {
  w->add_option("--rank", o->tcp.rank, "This stage's rank, 0-based")
      ->envname("CONTEND_RANK")
      ->required()
      ->check(CLI::NonNegativeNumber);
  w->add_option("--world-size", o->run.workload.stages, "Number of stages (1 to 1024)")
      ->envname("CONTEND_WORLD_SIZE")
      ->required()
      ->check(CLI::Range(1, schedule::kMaxRanks));
  w->add_option("--peers", o->peers, "host:port of every rank, comma-separated; each rank listens on its own port")
      ->envname("CONTEND_PEERS")
      ->required();
  add_parsed_list(w, "--reach", o->reach, parse_reach,
                  "RANK=HOST:PORT: connect to that rank there instead of at its --peers entry (a looped schedule's "
                  "last rank reaching the first over the link between them; repeat)",
                  "RANK=HOST:PORT");
  add_parsed(
      w, "--transport", o->run.workload.transport, [](const std::string& t) { return pipeline::transports().parse(t); },
      "tcp, or nccl (activations and gradients through NCCL on each rank's GPU, bootstrapped over TCP; "
      "when built); default tcp",
      "TRANSPORT");
  w->add_option("--congestion", o->tcp.congestion, "TCP congestion control per socket (default cubic)");
  add_parsed(w, "--timeout", o->run.executor.timeout, milliseconds_of,
             "Longest wait for a peer's tensor before failing (duration; default 30s)", "DURATION");
  add_parsed(w, "--connect-timeout", o->tcp.connect_timeout, milliseconds_of,
             "Longest wait for neighbours to come up (duration; default 30s)", "DURATION");
  w->add_flag("--checksum", o->tcp.checksum, "Checksum every tensor on the wire");
  w->add_option("--truth", o->truth,
                "The scenario's network as `contend run` resolved it (contend.truth/1): its links' stalls, which "
                "this rank's sends wait, and (the oracle and observer policies, rank 0) each link's rate over time");
  w->add_option("--scenario-start", o->scenario_start_s,
                "The scenario's time 0 in steady-clock seconds, the player's (default: when the worker starts)");
}

// What it runs: the schedule or policy, the iterations, the backend, the model.
void add_workload_options(CLI::App* w, WorkerOptions* o) {
  add_parsed(w, "--schedule", o->run.schedule, pipeline::parse_schedule_or_policy,
             "A schedule (1f1b, kfkb:k=N, gpipe) or a policy choosing k every iteration (fixed:k=N, "
             "adaptive[:kmax=N,mem=SIZE,...], oracle[:...], observer[:...]); docs/schedules.md, docs/adaptive.md "
             "(default 1f1b)",
             "SCHEDULE");
  w->add_option("--microbatches", o->run.workload.microbatches, "Micro-batches per iteration (1 to 65536; default 8)")
      ->check(CLI::Range(1, schedule::kMaxMicrobatches));
  w->add_option("--iterations", o->run.workload.iterations, "Iterations to run (1 to 1000000; default 10)")
      ->check(CLI::Range(1, 1000000));
  add_parsed(
      w, "--backend", o->run.workload.backend, [](const std::string& t) { return pipeline::backends().parse(t); },
      "cpu (real model, OpenBLAS), emulated (given durations) or cuda[:math=fp32|tf32|bf16] (the model on "
      "a GPU, when built); default cpu",
      "BACKEND");
  w->add_option("--hidden", o->run.workload.model.hidden, "Model width h (default 64)")->check(CLI::PositiveNumber);
  w->add_option("--ffn-mult", o->run.workload.model.ffn_mult, "Inner width multiple (default 4)")
      ->check(CLI::PositiveNumber);
  w->add_option("--layers", o->run.workload.model.layers, "Blocks over all stages (default 8)")
      ->check(CLI::PositiveNumber);
  add_parsed(w, "--split", o->run.workload.model.split, parse_split,
             "Layers per stage, comma-separated (default: even)", "N,N,...");
  w->add_option("--microbatch-size", o->run.workload.model.microbatch_size, "Sequences per micro-batch (default 4)")
      ->check(CLI::PositiveNumber);
  w->add_option("--seq-len", o->run.workload.model.seq_len, "Tokens per sequence (default 16)")
      ->check(CLI::PositiveNumber);
  w->add_option("--optimizer", o->run.workload.model.optimizer, "sgd or adam (default sgd)")
      ->check(CLI::IsMember({"sgd", "adam"}));
  w->add_option("--lr", o->run.workload.model.lr, "Learning rate (default 0.05)");
  w->add_option("--seed", o->run.workload.model.seed, "Seed of weights and data (default 1234)");
}

// Emulated stages: their times and tensors.
void add_emulated_options(CLI::App* w, WorkerOptions* o) {
  add_parsed(w, "--fwd", o->run.workload.emulated.forward, parse_duration,
             "emulated: forward time per micro-batch (duration; default 10ms)", "DURATION");
  add_parsed(w, "--bwd", o->bwd, parse_duration, "emulated: backward time (duration; default 2 x --fwd)", "DURATION");
  add_parsed(w, "--activation", o->run.workload.emulated.activation_bytes, parse_size_bytes,
             "emulated: tensor sent per micro-batch, each way (size; default 1MiB)", "SIZE");
  w->add_flag("--spin", o->run.workload.emulated.spin, "emulated: busy-wait instead of sleeping");
  w->add_flag("--profile", o->run.profile, "emulated: take durations and sizes from profiling the cpu model");
}

// --workload: the whole workload as JSON, the experiment file's "workload" object (what `contend
// run` gives its workers), decoded by the codec every part of contend shares; it excludes every
// option that sets a member of the workload: the codec's (by its keys) and the runtime's others,
// which it resets.
void add_workload_json(CLI::App* w, WorkerOptions* o) {
  std::string keys;
  for (const std::string& key : pipeline::workload_keys()) {
    keys += (keys.empty() ? "" : ", ") + key;
  }
  auto* option = add_parsed(
      w, "--workload", o->workload,
      [](const std::string& text) { return pipeline::parse_workload_json(text, "--workload"); },
      "The workload as JSON, an experiment's \"workload\" object (" + keys +
          "; docs/experiment-format.md): what contend run gives its workers. Its warm-up iterations run first. "
          "Excludes the options that set the same, and the model's others (they keep their defaults)",
      "JSON");
  std::vector<std::string> excluded = {"--ffn-mult", "--split", "--optimizer", "--lr", "--seed", "--spin"};
  for (std::string key : pipeline::workload_keys()) {
    std::replace(key.begin(), key.end(), '_', '-');
    if (key != "stages" && w->get_option_no_throw("--" + key) != nullptr) {  // the world size is --world-size
      excluded.push_back("--" + key);
    }
  }
  for (const std::string& name : excluded) {
    option->excludes(w->get_option(name));
  }
}

}  // namespace

std::function<int()> add_worker_command(CLI::App& sub) {
  auto o = std::make_shared<WorkerOptions>();
  add_network_options(&sub, o.get());
  add_workload_options(&sub, o.get());
  add_emulated_options(&sub, o.get());
  add_workload_json(&sub, o.get());
  CLI::App* w = &sub;
  w->add_option("--metrics", o->metrics, "Append contend.iteration/1 JSON lines to FILE (- for stdout)");
  w->add_option("--trace", o->trace, "Write a Chrome trace of this rank's actions to FILE");
  return [o] { return run(*o); };
}

}  // namespace contend::tools
