#include "ab_command.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "commands.h"
#include "compare_command.h"
#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/results/summary.h"
#include "signals.h"

namespace contend::tools {
namespace {

namespace fs = std::filesystem;

// One side of the comparison: which contend runs which experiment.
struct Side {
  std::string name;  // "base" or "head"
  std::string binary;
  std::string experiment;
  std::string files;  // the fingerprint of the experiment's files (env.json's "files_fingerprint")
};

struct AbOptions {
  std::string experiment;
  std::string base_experiment;  // empty: the experiment
  std::string base_binary;      // empty: this contend
  std::string head_binary;      // empty: this contend
  std::string out;
  std::string resume;  // or: the folder of an ab to go on with
  int rounds = 5;
  unsigned seed = 1;
  bool simulate = false;
  bool keep_awake = false;
  VerdictArgs verdict;
};

std::string self() {
  return fs::read_symlink("/proc/self/exe").string();
}

// Whether `s.binary` is a contend whose `run` has --repetitions, which each round needs: its
// `run --help`, read before anything is made (a program not found or not runnable is said too).
Result<void> check_binary(const Side& s) {
  auto pipe = Fd::pipe();
  if (!pipe) {
    return pipe.error();
  }
  ChildOptions co;
  co.stdout_fd = pipe->second.get();
  co.stderr_fd = pipe->second.get();
  auto child = ChildProcess::spawn({s.binary, "run", "--help"}, co);
  pipe->second.reset();
  if (!child) {
    return with_context(child.error(), "--" + s.name);
  }
  auto help = read_all(pipe->first, 1 << 20);
  auto code = child->wait(std::chrono::seconds(30));
  if (code && *code == 0 && help && help->find("--repetitions") != std::string::npos) {
    return {};
  }
  return make_error(Errc::kInvalidArgument,
                    "--" + s.name + ": " + s.binary +
                        (code && *code == 0 ? " has no `run --repetitions`, which each round needs (a contend "
                                              "from before `contend ab`: build one that has it)"
                                            : " is not a contend (`run --help` " +
                                                  (code ? ending(*code) : code.error().message) + ")"));
}

// The two sides, their files checked before anything runs: contends that can run a round,
// experiments that load and name the same experiment (their cells are compared one by one).
Result<std::pair<Side, Side>> sides_of(const AbOptions& o) {
  Side base{"base", o.base_binary.empty() ? self() : o.base_binary,
            o.base_experiment.empty() ? o.experiment : o.base_experiment, ""};
  Side head{"head", o.head_binary.empty() ? self() : o.head_binary, o.experiment, ""};
  std::string name;
  for (Side* s : {&head, &base}) {
    if (auto ok = check_binary(*s); !ok) {
      return ok.error();
    }
    auto e = runner::load_experiment(s->experiment);
    if (!e) {
      return with_context(e.error(), s->name + "'s experiment");
    }
    if (!name.empty() && e->name != name) {
      return make_error(Errc::kInvalidArgument, "the base's experiment is \"" + e->name + "\", the head's \"" + name +
                                                    "\": an A/B comparison runs one experiment's cells on both sides "
                                                    "(a changed copy keeps its name)");
    }
    name = e->name;
    s->files = runner::files_fingerprint(*e);
  }
  return std::pair{base, head};
}

// DIR/SIDE/round-NN (the same names whatever --rounds, so that --resume finds them).
std::string round_dir(const AbOptions& o, const Side& s, int round) {
  return o.out + "/" + s.name + "/round-" + (round < 10 ? "0" : "") + std::to_string(round);
}

// Ends the round's progress line on stdout, so that a message on stderr starts a line of its own.
void end_progress_line() {
  std::printf("\n");
  std::fflush(stdout);
}

// The exit code of a stopped comparison, said with where it stopped (`when`: "in", "before").
int stopped(const AbOptions& o, const Side& s, int round, const char* when) {
  end_progress_line();
  std::fprintf(stderr, "contend ab: stopped %s round %d (%s); the rounds done are kept in %s (continue: --resume %s)\n",
               when, round, s.name.c_str(), o.out.c_str(), o.out.c_str());
  return 128 + stop_signal();
}

// Whether a round's run finished every cell (--resume keeps it): a stopped run writes a summary too,
// of the cells it finished.
bool round_done(const std::string& dir) {
  auto summary = runner::read_summary(dir + "/summary.json");
  return summary && !summary->cells.empty() &&
         std::all_of(summary->cells.begin(), summary->cells.end(),
                     [](const runner::CellSummary& c) { return !c.throughput.empty(); });
}

// One round of one side: its contend runs every cell once into the round's folder, its output in
// the folder's log. 0, or the exit code ab ends with (1 on a failed round, 128 + the signal when
// stopped: the round's run is stopped and cleans up what it made).
int run_round(const AbOptions& o, const Side& s, int round, const std::atomic<bool>& stop) {
  const std::string dir = round_dir(o, s, round);
  if (stop.load()) {
    return stopped(o, s, round, "before");
  }
  if (round_done(dir)) {  // done before (--resume)
    std::printf("  %s done", s.name.c_str());
    return 0;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);  // a round stopped before it finished starts again
  std::vector<std::string> argv{s.binary, "run", s.experiment, "--out", dir, "--repetitions", "1", "--no-report"};
  if (o.simulate) {
    argv.emplace_back("--simulate");
  }
  if (o.keep_awake) {
    argv.emplace_back("--keep-awake");
  }
  ChildOptions co;
  co.output_path = dir + ".log";
  co.grace = std::chrono::minutes(2);  // a real run removes its namespaces before it exits
  const auto start = std::chrono::steady_clock::now();
  auto child = ChildProcess::spawn(argv, co);
  if (!child) {
    end_progress_line();
    return fail("ab", child.error().message);
  }
  Result<int> code = child->wait(std::chrono::milliseconds(200));
  while (!code && code.error().code == Errc::kTimeout && !stop.load()) {
    code = child->wait(std::chrono::milliseconds(200));
  }
  const bool done = code && *code == 0;
  if (stop.load() && !done) {  // the round's run stops too (a terminal's Ctrl-C reaches it first)
    child->terminate();
    return stopped(o, s, round, "in");
  }
  if (!done) {
    end_progress_line();
    return fail("ab", "round " + std::to_string(round) + " of the " + s.name + " (" + s.binary + " run " +
                          s.experiment + ") " + (code ? ending(*code) : code.error().message) + "; its log, " +
                          co.output_path + ", ends:\n" + file_tail(co.output_path, 2000));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  %s %.1f s", s.name.c_str(), seconds);
  std::fflush(stdout);
  return 0;
}

// Every round's summaries of one side, pooled: one repetition per round and cell.
Result<runner::Summary> pooled_side(const AbOptions& o, const Side& s) {
  std::vector<runner::Summary> runs;
  for (int round = 1; round <= o.rounds; ++round) {
    auto summary = runner::read_summary(round_dir(o, s, round) + "/summary.json");
    if (!summary) {
      return summary.error();
    }
    runs.push_back(std::move(*summary));
  }
  return runner::pooled(runs);
}

// Which rounds run the head first: half of them (the odd one out drawn), in a shuffled order
// (seeded), so that neither side runs first more often, nor in a pattern the machine could follow.
std::vector<char> head_first_rounds(int rounds, unsigned seed) {
  std::mt19937 draw(seed);
  std::vector<char> order(static_cast<std::size_t>(rounds), 0);
  const int heads = rounds / 2 + (rounds % 2 == 1 && std::bernoulli_distribution(0.5)(draw) ? 1 : 0);
  std::fill(order.begin(), order.begin() + heads, 1);
  std::shuffle(order.begin(), order.end(), draw);
  return order;
}

// The rounds, each side's run once a round, the head first in half of them, so that what the
// machine does meanwhile falls on both sides alike.
int run_rounds(const AbOptions& o, const Side& base, const Side& head) {
  const auto& stop = install_stop_handlers();
  const std::vector<char> order = head_first_rounds(o.rounds, o.seed);
  for (int round = 1; round <= o.rounds; ++round) {
    const bool head_first = order[static_cast<std::size_t>(round - 1)] != 0;
    std::printf("round %d/%d:", round, o.rounds);
    std::fflush(stdout);
    for (const Side* s : head_first ? std::array{&head, &base} : std::array{&base, &head}) {
      if (int code = run_round(o, *s, round, stop); code != 0) {
        return code;
      }
    }
    std::printf("\n");
  }
  return 0;
}

// A new --out with its sides' folders (its parents made as needed); never one that exists.
Result<void> make_out(const std::string& out) {
  std::error_code ec;
  const fs::path parent = fs::path(out).parent_path();
  fs::create_directories(parent.empty() ? fs::path(".") : parent, ec);
  if (!fs::create_directory(out, ec)) {
    return make_error(Errc::kInvalidArgument,
                      "--out " + out + (ec ? ": " + ec.message() : " exists: results are never overwritten"));
  }
  for (const char* side : {"/base", "/head"}) {
    if (!fs::create_directory(out + side, ec)) {
      return make_error(Errc::kIo, "create " + out + side + ": " + ec.message());
    }
  }
  return {};
}

// The fingerprint of the files a round ran (its env.json's; empty where it has none).
std::string round_files(const std::string& dir) {
  auto env = read_json_file(dir + "/env.json");
  if (!env || !env->is_object() || !env->contains("files_fingerprint") || !(*env)["files_fingerprint"].is_string()) {
    return {};
  }
  return (*env)["files_fingerprint"].get<std::string>();
}

// --resume's folder: an ab's, with both sides' folders, whose finished rounds ran the files each
// side's experiment holds now (rounds of other files would be pooled with the new ones).
Result<void> check_resume(const AbOptions& o, const Side& base, const Side& head) {
  std::error_code ec;
  if (!fs::is_directory(o.out + "/base", ec) || !fs::is_directory(o.out + "/head", ec)) {
    return make_error(Errc::kInvalidArgument,
                      "--resume " + o.out + ": not the folder of a contend ab (it has no base/ and head/)");
  }
  for (const Side* s : {&base, &head}) {
    for (int round = 1; round <= o.rounds; ++round) {
      const std::string dir = round_dir(o, *s, round);
      const std::string files = round_done(dir) ? round_files(dir) : "";
      if (!files.empty() && files != s->files) {
        return make_error(Errc::kInvalidArgument,
                          "--resume " + o.out + ": " + s->name + "/" + fs::path(dir).filename().string() +
                              " ran other files than " + s->experiment + " and its scenarios hold now (fingerprint " +
                              files + ", now " + s->files + "): its rounds and new ones would not compare; start a " +
                              "new ab (--out), or restore the files");
      }
    }
  }
  return {};
}

// --out as given, without a trailing slash ("ab/" names the folder ab).
std::string out_folder(const std::string& out) {
  fs::path p = fs::path(out).lexically_normal();
  return p.has_filename() ? p.string() : p.parent_path().string();
}

int ab(AbOptions o) {
  if (o.out.empty() && o.resume.empty()) {
    return fail("ab", "--out DIR is required (or --resume DIR)");
  }
  o.out = out_folder(o.resume.empty() ? o.out : o.resume);
  if (!o.simulate && o.rounds < 4) {
    return fail("ab", "--rounds " + std::to_string(o.rounds) + ": " + std::to_string(o.rounds) +
                          " pairs leave Student's t " + std::to_string(std::max(o.rounds - 1, 0)) +
                          " degrees of freedom, an interval too wide to resolve a tolerance of a few percent; run "
                          "at least 4 (5 to resolve a tolerance through the noise), or --simulate, which is exact");
  }
  auto sides = sides_of(o);
  if (!sides) {
    return fail("ab", sides.error().message);
  }
  const auto& [base, head] = *sides;
  if (auto ok = o.resume.empty() ? make_out(o.out) : check_resume(o, base, head); !ok) {
    return fail("ab", ok.error().message);
  }
  std::printf("A/B: head %s %s, base %s %s; %d rounds into %s\n", head.binary.c_str(), head.experiment.c_str(),
              base.binary.c_str(), base.experiment.c_str(), o.rounds, o.out.c_str());
  if (int code = run_rounds(o, base, head); code != 0) {
    return code;
  }
  auto now = pooled_side(o, head);
  auto reference = now ? pooled_side(o, base) : now;
  if (!reference) {
    return fail("ab", reference.error().message);
  }
  VerdictArgs args = o.verdict;
  if (args.by.empty()) {
    args.by = "throughput";  // both sides ran on this machine in the same rounds: their samples/s compare
  }
  auto options = verdict_options(args, true);
  if (!options) {
    return fail("ab", options.error().message);
  }
  options->paired = o.rounds >= 2;  // round r of each side ran back to back: a pair (one: exact, simulated)
  options->family = true;           // a run flags when any cell does: alpha is the run's
  const bool throughput = options->quantity == runner::Quantity::kThroughput;
  if (auto ok = runner::check_comparable(*now, *reference, o.out + "/base", throughput); !ok) {
    return fail("ab", ok.error().message);
  }
  return report_verdicts(*now, {*reference}, "the base's " + std::to_string(o.rounds) + " rounds", *options,
                         o.verdict.reports);
}

}  // namespace

std::function<int()> add_ab_command(CLI::App& sub) {
  auto o = std::make_shared<AbOptions>();
  sub.add_option("experiment", o->experiment, "The experiment the head runs (and the base, unless --base-experiment)")
      ->required()
      ->check(CLI::ExistingFile);
  auto* out = sub.add_option(
      "--out", o->out,
      "Folder for both sides' rounds (base/round-NN, head/round-NN, each a results folder), must not exist");
  sub.add_option("--resume", o->resume,
                 "Go on with the ab in this folder, the command otherwise the same: its finished rounds are kept, a "
                 "stopped one runs again, and a larger --rounds adds rounds")
      ->excludes(out);
  sub.add_option("--base", o->base_binary, "The contend of the base (the build before the change; default: this one)");
  sub.add_option("--head", o->head_binary, "The contend of the head (the build with the change; default: this one)");
  sub.add_option("--base-experiment", o->base_experiment,
                 "The experiment the base runs, when the change is in the experiment (default: the same one)")
      ->check(CLI::ExistingFile);
  sub.add_option("--rounds", o->rounds,
                 "Rounds; each runs every cell once on each side, a pair, judged by a paired t-test over the "
                 "rounds (at least 4 for real runs; 5 to resolve a tolerance through the noise)")
      ->capture_default_str()
      ->check(CLI::Range(1, runner::kMaxRepetitions));
  sub.add_option("--seed", o->seed, "Seed of which rounds run the head first (half of them, shuffled)")
      ->capture_default_str();
  sub.add_flag("--simulate", o->simulate, "Run both sides in the simulator (no root; exact, so any change shows)");
  sub.add_flag("--keep-awake", o->keep_awake, "Both sides' runs keep the CPUs from idling (contend run --keep-awake)")
      ->excludes(sub.get_option("--simulate"));
  // 1%, not compare's 2%: the machine's drift between runs, which a run judged against earlier
  // runs must allow, cancels in each round's pair (docs/regression.md, measured)
  o->verdict.tolerance = "1%";
  add_tolerance_option(&sub, o->verdict);
  add_by_option(&sub, o->verdict, "--by")
      ->description(
          "What is compared: `throughput` (the default here: both sides ran on this machine, round by round) or "
          "`speedup` over the baseline schedule, repetition by repetition");
  add_reports_option(&sub, o->verdict);
  sub.footer(
      "Runs the base and the head alternately on this machine, round by round, each round every cell once on each "
      "side, the head first in half the rounds (randomized multiple interleaved trials), then judges each cell's "
      "rounds as pairs (a paired t-test of their ratios, Holm-adjusted over the cells; by throughput unless --by). "
      "The machine's drift between runs falls on both sides alike and cancels in each round's ratio. Exit 3 on a "
      "significant loss beyond --tolerance or a cell missing "
      "from the head, 1 on bad input or a failed round, 128 + the signal when stopped. Both binaries need "
      "`contend run --repetitions`. docs/regression.md");
  return [o] { return ab(*o); };
}

}  // namespace contend::tools
