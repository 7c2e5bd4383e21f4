#include "run_command.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "build_info.h"
#include "commands.h"
#include "compare_command.h"
#include "data_dir.h"
#if CONTEND_BUILT_CUDA
#include "contend/pipeline_cuda/plugin.h"
#endif
#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/units.h"
#include "contend/runner/run.h"
#include "contend/runner/simulated/fidelity.h"
#include "contend/runner/simulated/simulate.h"
#include "contend/runner/truth/network.h"
#include "signals.h"

namespace contend::tools {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string experiment;
  std::string out;
  std::string resume;
  std::string compare;
  VerdictArgs verdict;  // --tolerance, --compare-by, --reports: how --compare judges
  bool simulate = false;
  bool shadows = false;     // --simulate: adaptive cells carry the observer's and the oracle's choices
  std::string calibration;  // --simulate: FILE or "host"
  bool no_report = false;
  bool keep_awake = false;
  int repetitions = 0;                    // --repetitions: the experiment's own when 0
  std::string hosts;                      // an Ansible inventory: hosts mode
  std::vector<std::string> ansible_vars;  // -e for the playbooks (hosts mode)
  std::vector<std::string> argv;
};

std::vector<std::string> own_argv() {
  std::vector<std::string> out;
  if (auto text = read_file("/proc/self/cmdline")) {
    std::string arg;
    for (char c : *text) {
      if (c == '\0') {
        out.push_back(arg);
        arg.clear();
      } else {
        arg += c;
      }
    }
  }
  return out;
}

// What env.json records of this process and build (the runner adds the experiment and mode).
// /proc/cpuinfo's first "model name" (empty where it has none): with the host and the CPU count,
// the machine a history keeps its runs to.
std::string cpu_model() {
  auto text = read_file("/proc/cpuinfo");
  const std::string key = "model name";
  const std::size_t at = text ? text->find(key) : std::string::npos;
  if (at == std::string::npos) {
    return "";
  }
  const std::size_t colon = text->find(':', at);
  const std::size_t end = text->find('\n', at);
  if (colon == std::string::npos || colon > end) {
    return "";
  }
  std::string model = text->substr(colon + 1, end - colon - 1);
  model.erase(0, model.find_first_not_of(' '));
  return model;
}

nlohmann::ordered_json env_json(const RunOptions& o) {
  nlohmann::ordered_json doc;
  doc["argv"] = o.argv;
  doc["version"] = CONTEND_VERSION;
  doc["git_commit"] = CONTEND_GIT_COMMIT;
  doc["built"] = {
      {"cuda", CONTEND_BUILT_CUDA != 0}, {"nccl", CONTEND_BUILT_NCCL != 0}, {"dpdk", CONTEND_BUILT_DPDK != 0}};
  utsname u{};
  if (::uname(&u) == 0) {
    doc["kernel"] = std::string(u.sysname) + " " + u.release;
    doc["host"] = u.nodename;
  }
  doc["cpus"] = ::sysconf(_SC_NPROCESSORS_ONLN);
  doc["cpu_model"] = cpu_model();
#if CONTEND_BUILT_CUDA
  if (auto plugin = pipeline_cuda::cuda_plugin()) {
    const auto gpu = (*plugin)->device_info();
    doc["cuda"] = {{"runtime", gpu.runtime_version}, {"driver", gpu.driver_version},
                   {"devices", gpu.devices},         {"gpu", gpu.gpu},
                   {"nccl", gpu.nccl_version},       {"summary", pipeline_cuda::describe(gpu)}};
  } else {
    doc["cuda"] = {{"summary", plugin.error().message}};
  }
#endif
  return doc;
}

// `contend report DIR`, as a child with its output in DIR/report.log: the figures are a
// convenience here, so a machine without matplotlib still gets its numbers.
void draw_report(const std::string& dir) {
  ChildOptions co;
  co.output_path = dir + "/report.log";
  auto child = ChildProcess::spawn({fs::read_symlink("/proc/self/exe").string(), "report", dir}, co);
  auto code = child ? child->wait(std::chrono::minutes(5)) : Result<int>(child.error());
  if (code && *code == 0) {
    std::printf("report: %s/report/index.html\n", dir.c_str());
  } else {
    std::printf("report: not drawn, see %s/report.log (then: contend report %s)\n", dir.c_str(), dir.c_str());
  }
}

// The fidelity suite's measurements --simulate quotes: $CONTEND_FIDELITY, else the shipped ones.
std::string fidelity_file() {
  return data_path("CONTEND_FIDELITY", "experiments/suites/fidelity/measured.json");
}

// --simulate's note beside the table: how far the simulator was off on the suite's nearest cells.
void print_fidelity(const RunOptions& o, const runner::Experiment& e) {
  if (!o.simulate || e.job) {
    return;
  }
  auto table = runner::load_fidelity(fidelity_file());
  if (!table) {
    std::printf("how far to trust it: unknown (no fidelity measurements: %s)\n", table.error().message.c_str());
    return;
  }
  const std::string kind = o.calibration.empty() ? "ideal" : o.calibration == "host" ? "host" : "own";
  std::cout << runner::fidelity_note(*table, e, kind) << std::flush;
}

// ansible/: $CONTEND_ANSIBLE_DIR, else the shipped playbooks.
std::string ansible_dir() {
  return data_path("CONTEND_ANSIBLE_DIR", "ansible");
}

// Results record their paths in JSON, which holds UTF-8 only: a path that is not is refused
// before anything is made.
Result<void> check_paths(const RunOptions& o) {
  for (const auto& [option, path] :
       {std::pair{"the experiment", &o.experiment}, std::pair{"--out", &o.out}, std::pair{"--resume", &o.resume},
        std::pair{"--compare", &o.compare}, std::pair{"--calibration", &o.calibration}}) {
    if (!path->empty() && !valid_utf8(std::filesystem::absolute(*path).string())) {
      return make_error(Errc::kInvalidArgument, std::string(option) + ": the path " + excerpt(*path) + " (from " +
                                                    excerpt(std::filesystem::current_path().string()) +
                                                    ") is not valid UTF-8, which results record paths in; rename it");
    }
  }
  return {};
}

// The experiment, ready for the mode asked: --simulate profiles a cpu workload's stages here.
Result<runner::Experiment> load(const RunOptions& o) {
  if (auto ok = check_paths(o); !ok) {
    return ok.error();
  }
  auto e = runner::load_experiment(o.experiment);
  if (!e || !o.simulate) {
    return e;
  }
  auto simulated = runner::simulated_workload(e->workload);
  if (!simulated) {
    return simulated.error();
  }
  if (e->workload.uses_model()) {
    std::fprintf(stderr,
                 "contend run: simulating the %s model with stage times profiled here: fwd %s, bwd %s, %s a tensor\n",
                 e->workload.backend.str().c_str(), format_duration(simulated->emulated.forward).c_str(),
                 format_duration(simulated->emulated.backward).c_str(),
                 format_size(simulated->emulated.activation_bytes).c_str());
  }
  e->workload = *simulated;
  return e;
}

// --simulate's runtime costs: a recorded calibration, one measured here, or none; said on stderr.
Result<std::optional<runner::Calibration>> calibration_of(const RunOptions& o, const runner::Experiment& e,
                                                          const runner::LaunchOptions& launch) {
  if (!o.simulate || e.job) {  // a command experiment is refused further on, never simulated
    return std::optional<runner::Calibration>{};
  }
  if (o.calibration.empty()) {
    std::fprintf(stderr,
                 "contend run: simulating the ideal pipeline: no runtime costs (--calibration FILE or "
                 "--calibration host adds them)\n");
    return std::optional<runner::Calibration>{};
  }
  if (o.calibration == "host") {
    std::fprintf(stderr, "contend run: calibrating on this host (the workload as 1F1B over loopback)...\n");
  }
  auto c = o.calibration == "host" ? runner::measure_on_host(e, launch)
                                   : runner::read_calibration(o.calibration, e.workload);
  if (!c) {
    return with_context(c.error(), "--calibration");
  }
  std::fprintf(stderr,
               "contend run: calibration %s: compute per micro-batch fwd %s, bwd %s; per send %s, per iteration %s, "
               "latency %s per transfer%s, first iteration at %s\n",
               c->source.c_str(), format_seconds(c->forward_s).c_str(), format_seconds(c->backward_s).c_str(),
               format_seconds(c->runtime.costs.send_s).c_str(), format_seconds(c->runtime.costs.iteration_s).c_str(),
               format_seconds(c->runtime.latency_s).c_str(),
               c->runtime.line_bps > 0 ? (", line rate " + format_rate(c->runtime.line_bps)).c_str() : "",
               format_seconds(c->runtime.start_s).c_str());
  return std::optional<runner::Calibration>{std::move(*c)};
}

// --compare's reference, read and checked against this run's experiment and mode; nothing
// without --compare.
struct Reference {
  runner::Summary summary;
  runner::VerdictOptions options;
};
Result<std::optional<Reference>> reference_of(const RunOptions& o, const runner::Experiment& e) {
  if (auto tolerance = parse_fraction(o.verdict.tolerance); !tolerance) {
    return with_context(tolerance.error(), "--tolerance");
  }
  if (o.compare.empty()) {
    return std::optional<Reference>();
  }
  auto s = runner::read_summary(o.compare);
  if (!s) {
    return s.error();
  }
  auto options = verdict_options(o.verdict, s->compare_throughput);
  if (!options) {
    return options.error();
  }
  runner::Summary mine{e.name, e.baseline, o.simulate ? "simulated" : "real", {}, "", false};
  const bool throughput = options->quantity == runner::Quantity::kThroughput;
  if (auto ok = runner::check_comparable(mine, *s, o.compare, throughput); !ok) {
    return with_context(ok.error(), "--compare");
  }
  return std::optional<Reference>(Reference{std::move(*s), *options});
}

// The runner's options from the command line's, the calibration measured or read here.
Result<runner::RunOptions> runner_options(const RunOptions& o, const runner::Experiment& e) {
  runner::RunOptions ro;
  ro.out = o.out;
  ro.resume = o.resume;
  ro.repetitions = o.repetitions;
  ro.simulate = o.simulate;
  ro.shadows = o.shadows;
  ro.keep_awake = o.keep_awake;
  if (!o.hosts.empty()) {
    ro.hosts = runner::HostsOptions{o.hosts, ansible_dir(), "", o.ansible_vars, {}};
  }
  ro.launch.contend = fs::read_symlink("/proc/self/exe").string();
  auto calibration = calibration_of(o, e, ro.launch);
  if (!calibration) {
    return calibration.error();
  }
  ro.calibration = std::move(*calibration);
  ro.env = [&o] { return env_json(o); };
  return ro;
}

// What a finished run prints and exits with: the failure or stop with how to resume, else the
// results, the calibration and the report (the comparison is the caller's).
std::optional<int> conclude(const RunOptions& o, const runner::RunOutcome& outcome) {
  const std::string resume = "(finished cells kept in " + outcome.dir + "; continue with --resume " + outcome.dir +
                             ", the experiment and scenario files unchanged)";
  if (outcome.unsaved) {
    return fail("run", (outcome.failed ? outcome.failed->message + "\n" : std::string()) +
                           "the summary could not be written: " + outcome.unsaved->message + "\n" + resume);
  }
  if (outcome.failed) {
    return fail("run", outcome.failed->message + "\n" + resume);
  }
  if (outcome.stopped) {
    std::fprintf(stderr, "contend run: stopped; %zu of %zu cells done, kept in %s (continue with --resume %s)\n",
                 outcome.cells_done, outcome.cells_total, outcome.dir.c_str(), outcome.dir.c_str());
    return 128 + stop_signal();
  }
  std::printf("results: %s\n", outcome.dir.c_str());
  if (outcome.calibration) {
    std::printf("calibration: %s/calibration.json (simulate this host's runtime with --simulate --calibration)\n",
                outcome.dir.c_str());
  } else if (!o.simulate) {
    std::printf("calibration: not recorded: %s\n", outcome.calibration_missing.c_str());
  }
  if (!o.no_report) {
    draw_report(outcome.dir);
  }
  return std::nullopt;
}

int run(RunOptions& o) {
  auto e = load(o);
  if (!e) {
    return fail("run", e.error().message);
  }
  auto reference = reference_of(o, *e);
  auto ro = reference ? runner_options(o, *e) : Result<runner::RunOptions>(reference.error());
  if (!ro) {
    return fail("run", ro.error().message);
  }
  auto outcome = runner::run_experiment(*e, *ro, install_stop_handlers());
  if (!outcome) {
    return fail("run", outcome.error().message);
  }
  std::cout << runner::summary_table(outcome->summary) << runner::tenants_table(outcome->summary) << std::flush;
  print_fidelity(o, *e);
  if (auto code = conclude(o, *outcome)) {
    return *code;
  }
  if (!*reference) {
    return 0;
  }
  return report_verdicts(outcome->summary, {(*reference)->summary}, o.compare, (*reference)->options,
                         o.verdict.reports);
}

}  // namespace

std::function<int()> add_run_command(CLI::App& sub) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* r = &sub;
  r->add_option("experiment", o->experiment, "Experiment file (contend.experiment/1, docs/experiment-format.md)")
      ->required()
      ->check(CLI::ExistingFile);
  r->add_option("--out", o->out, "Results directory, must not exist (default results/NAME-TIMESTAMP)");
  r->add_option("--resume", o->resume, "Continue an interrupted run in this directory, skipping finished cells");
  r->add_flag("--simulate", o->simulate, "Run the matrix in the simulator (no root, any scale) instead of for real");
  r->add_option("--compare", o->compare,
                "Reference summary.json: a verdict per cell from both runs' repetitions, exit 3 on a significant "
                "loss beyond --tolerance (docs/regression.md)");
  r->add_option("--hosts", o->hosts,
                "Run on cluster hosts: an Ansible inventory whose `nodes` group lists them in pipeline order "
                "(ansible/README.md)")
      ->check(CLI::ExistingFile);
  r->add_option("--ansible-var", o->ansible_vars, "KEY=VALUE passed to the playbooks with -e (repeat)");
  r->add_option("--calibration", o->calibration,
                "With --simulate: the runtime's costs, from a real run's calibration.json, or `host` to measure "
                "them here over loopback first (default: none, the ideal pipeline)")
      ->needs(r->get_option("--simulate"));
  r->add_flag("--shadows", o->shadows,
              "With --simulate: every iteration of an `adaptive` cell also records what the observer and the "
              "oracle, deciding beside it on the same reports, would have run and how long that took (where the "
              "gap to the oracle goes, one decision at a time: docs/adaptive.md)")
      ->needs(r->get_option("--simulate"));
  r->add_option("--repetitions", o->repetitions,
                "Run every cell this many times instead of the experiment's `repetitions` (a quick look, or one "
                "round of `contend ab`); a resumed run keeps the count it began with")
      ->check(CLI::Range(1, runner::kMaxRepetitions));
  r->add_flag("--no-report", o->no_report, "Do not draw the figures at the end (contend report DIR does)");
  add_tolerance_option(r, o->verdict);
  add_by_option(r, o->verdict, "--compare-by")->needs(r->get_option("--compare"));
  add_reports_option(r, o->verdict);
  r->get_option("--reports")->needs(r->get_option("--compare"));

  r->add_flag("--keep-awake", o->keep_awake,
              "Keep this machine's CPUs from idling while the cells run (a thread per CPU at the lowest "
              "priority): on a VM an idle CPU halts and every wake-up waits for the hypervisor (steal)");
  r->get_option("--out")->excludes(r->get_option("--resume"));
  r->get_option("--repetitions")->excludes(r->get_option("--resume"));
  r->get_option("--keep-awake")->excludes(r->get_option("--simulate"));
  r->get_option("--keep-awake")->excludes(r->get_option("--hosts"));
  r->get_option("--hosts")->excludes(r->get_option("--simulate"));
  return [o] {
    o->argv = own_argv();
    return run(*o);
  };
}

}  // namespace contend::tools
