#include "ab_command.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "commands.h"
#include "compare_command.h"
#include "contend/common/child_process.h"
#include "contend/common/fd.h"
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
};

struct AbOptions {
  std::string experiment;
  std::string base_experiment;  // empty: the experiment
  std::string base_binary;      // empty: this contend
  std::string head_binary;      // empty: this contend
  std::string out;
  int rounds = 5;
  unsigned seed = 1;
  bool simulate = false;
  bool keep_awake = false;
  VerdictArgs verdict;
};

std::string self() {
  return fs::read_symlink("/proc/self/exe").string();
}

// The two sides, their files checked before anything runs: binaries that can be run, experiments
// that load and name the same experiment (their cells are compared one by one).
Result<std::pair<Side, Side>> sides_of(const AbOptions& o) {
  Side base{"base", o.base_binary.empty() ? self() : o.base_binary,
            o.base_experiment.empty() ? o.experiment : o.base_experiment};
  Side head{"head", o.head_binary.empty() ? self() : o.head_binary, o.experiment};
  std::string name;
  for (const Side* s : {&head, &base}) {
    if (::access(s->binary.c_str(), X_OK) != 0) {
      return make_error(Errc::kInvalidArgument,
                        "--" + s->name + ": " + s->binary + " is not a program this user can run");
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
  }
  return std::pair{base, head};
}

std::string round_dir(const AbOptions& o, const Side& s, int round) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "round-%02d", round);
  return o.out + "/" + s.name + "/" + buf;
}

// The last lines of a round's log, for the message of a round that failed.
std::string tail_of(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    return "";
  }
  std::size_t at = text->size();
  if (at > 0 && (*text)[at - 1] == '\n') {
    --at;  // the last line's own newline
  }
  for (int lines = 0; lines < 6 && at > 0; ++lines) {
    const std::size_t newline = text->rfind('\n', at - 1);
    at = newline == std::string::npos ? 0 : newline;
  }
  return text->substr(at == 0 ? 0 : at + 1);
}

// Ends the round's progress line on stdout, so that a message on stderr starts a line of its own.
void end_progress_line() {
  std::printf("\n");
  std::fflush(stdout);
}

// The exit code of a stopped comparison, said with where it stopped (`when`: "in", "before").
int stopped(const AbOptions& o, const Side& s, int round, const char* when) {
  end_progress_line();
  std::fprintf(stderr, "contend ab: stopped %s round %d (%s); the rounds done are kept in %s\n", when, round,
               s.name.c_str(), o.out.c_str());
  return 128 + stop_signal();
}

// One round of one side: its contend runs every cell once into the round's folder, its output in
// the folder's log. 0, or the exit code ab ends with (1 on a failed round, 128 + the signal when
// stopped: the round's run is stopped and cleans up what it made).
int run_round(const AbOptions& o, const Side& s, int round, const std::atomic<bool>& stop) {
  const std::string dir = round_dir(o, s, round);
  if (stop.load()) {
    return stopped(o, s, round, "before");
  }
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
  if (stop.load()) {  // the round's run stops too (a terminal's Ctrl-C reaches it first)
    child->terminate();
    return stopped(o, s, round, "in");
  }
  if (!code || *code != 0) {
    end_progress_line();
    return fail("ab", "round " + std::to_string(round) + " of the " + s.name + " (" + s.binary + " run " +
                          s.experiment + ") " + (code ? ending(*code) : code.error().message) + "; its log, " +
                          co.output_path + ", ends:\n" + tail_of(co.output_path));
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

// The rounds, each side's run once a round in an order drawn anew each round (seeded), so that
// what the machine does meanwhile falls on both sides alike and on neither always first.
int run_rounds(const AbOptions& o, const Side& base, const Side& head) {
  const auto& stop = install_stop_handlers();
  std::mt19937 draw(o.seed);
  for (int round = 1; round <= o.rounds; ++round) {
    const bool head_first = std::bernoulli_distribution(0.5)(draw);
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

int ab(const AbOptions& o) {
  auto sides = sides_of(o);
  if (!sides) {
    return fail("ab", sides.error().message);
  }
  const auto& [base, head] = *sides;
  std::error_code ec;
  fs::create_directories(fs::path(o.out).parent_path().empty() ? "." : fs::path(o.out).parent_path(), ec);
  if (!fs::create_directory(o.out, ec)) {
    return fail("ab", "--out " + o.out + (ec ? ": " + ec.message() : " exists: results are never overwritten"));
  }
  fs::create_directory(o.out + "/base");
  fs::create_directory(o.out + "/head");
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
    args.by = "throughput";  // both sides on this machine at once: what the rounds pair off is its drift
  }
  auto options = verdict_options(args, true);
  if (!options) {
    return fail("ab", options.error().message);
  }
  if (auto ok = runner::check_comparable(*now, *reference, o.out + "/base", true); !ok) {
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
  sub.add_option("--out", o->out, "Folder for both sides' rounds (base/round-NN, head/round-NN), must not exist")
      ->required();
  sub.add_option("--base", o->base_binary, "The contend of the base (the build before the change; default: this one)");
  sub.add_option("--head", o->head_binary, "The contend of the head (the build with the change; default: this one)");
  sub.add_option("--base-experiment", o->base_experiment,
                 "The experiment the base runs, when the change is in the experiment (default: the same one)")
      ->check(CLI::ExistingFile);
  sub.add_option("--rounds", o->rounds,
                 "Rounds; each runs every cell once on each side, so each side ends with this many repetitions "
                 "(at least 5 to resolve a tolerance: 4 a side cannot give p < 0.05 below complete separation)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  sub.add_option("--seed", o->seed, "Seed of the order of the sides, drawn anew each round")->capture_default_str();
  sub.add_flag("--simulate", o->simulate, "Run both sides in the simulator (no root; exact, so any change shows)");
  sub.add_flag("--keep-awake", o->keep_awake, "Both sides' runs keep the CPUs from idling (contend run --keep-awake)")
      ->excludes(sub.get_option("--simulate"));
  add_tolerance_option(&sub, o->verdict);
  add_by_option(&sub, o->verdict, "--by")
      ->description(
          "What is compared: `throughput` (the default here: both sides ran on this machine, round by round) or "
          "`speedup` over the baseline schedule, repetition by repetition");
  add_reports_option(&sub, o->verdict);
  sub.footer(
      "Runs the base and the head alternately on this machine, round by round, each round every cell once on each "
      "side in an order drawn anew (randomized multiple interleaved trials), then judges the head's repetitions "
      "against the base's as `contend compare` does (by throughput unless --by). The machine's drift between runs "
      "falls on both sides alike. Exit 3 on a significant loss beyond --tolerance, 1 on bad input or a failed "
      "round, 128 + the signal when stopped. Both binaries need `contend run --repetitions`. docs/regression.md");
  return [o] { return ab(*o); };
}

}  // namespace contend::tools
