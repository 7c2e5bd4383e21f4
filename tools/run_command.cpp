#include "run_command.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "build_info.h"
#if CONTEND_BUILT_CUDA
#include "contend/pipeline_cuda/device_info.h"
#endif
#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/units.h"
#include "contend/runner/hosts.h"
#include "contend/runner/launcher.h"
#include "contend/runner/results.h"
#include "contend/runner/summary.h"
#include "contend/runner/truth.h"
#include "signals.h"

namespace contend::tools {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string experiment;
  std::string out;
  std::string resume;
  std::string compare;
  std::string tolerance = "5%";
  bool simulate = false;
  bool no_report = false;
  std::string hosts;                      // an Ansible inventory: hosts mode
  std::vector<std::string> ansible_vars;  // -e for the playbooks (hosts mode)
  std::vector<std::string> argv;
};

// "5%" or "0.05" -> 0.05.
Result<double> parse_fraction(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != nullptr && *end == '%' && end[1] == '\0') {
    v /= 100;
  } else if (text.empty() || end == nullptr || *end != '\0') {
    return make_error(Errc::kInvalidArgument, "expected a percentage like \"5%\" or a fraction, got \"" + text + "\"");
  }
  if (v < 0 || v > 1) {
    return make_error(Errc::kInvalidArgument, "expected 0% to 100%, got \"" + text + "\"");
  }
  return v;
}

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

int fail(const std::string& message) {
  std::fprintf(stderr, "contend run: %s\n", message.c_str());
  return 1;
}

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

nlohmann::ordered_json env_json(const RunOptions& o, const runner::Experiment& e) {
  auto doc = json_document("env", 1);
  doc["experiment"] = e.name;
  doc["experiment_file"] = fs::absolute(o.experiment).string();
  doc["mode"] = o.simulate ? "simulated" : "real";
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
#if CONTEND_BUILT_CUDA
  const auto gpu = pipeline_cuda::device_info();
  doc["cuda"] = {{"runtime", gpu.runtime_version}, {"driver", gpu.driver_version},
                 {"devices", gpu.devices},         {"gpu", gpu.gpu},
                 {"nccl", gpu.nccl_version},       {"summary", pipeline_cuda::describe(gpu)}};
#endif
  doc["started"] = timestamp();
  return doc;
}

// Cells finished in an earlier (interrupted) run of this directory: id -> samples/s.
std::map<std::string, double> finished_cells(const std::string& dir) {
  std::map<std::string, double> out;
  std::ifstream in(dir + "/cells.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.contains("id") && j.contains("throughput")) {
      out[j["id"].get<std::string>()] = j["throughput"].get<double>();
    }
  }
  return out;
}

class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(::isatty(2) != 0) {}
  // Cell i (0-based) starts; `run` cells have run before it in this process.
  void cell(std::size_t i, const std::string& id, std::size_t run) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta = "?";
    if (run > 0) {
      eta = std::to_string(static_cast<long>(elapsed / static_cast<double>(run) * static_cast<double>(total_ - i))) +
            " s";
    }
    std::fprintf(stderr, "%s[%zu/%zu] %s  elapsed %ld s, about %s left%s", tty_ ? "\r\033[K" : "", i + 1, total_,
                 id.c_str(), static_cast<long>(elapsed), eta.c_str(), tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void end() {
    if (tty_) {
      std::fprintf(stderr, "\n");
    }
  }

 private:
  std::size_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

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

// ansible/: $CONTEND_ANSIBLE_DIR, else the source tree this binary was built from.
std::string ansible_dir() {
  const char* dir = std::getenv("CONTEND_ANSIBLE_DIR");
  return dir != nullptr ? dir : CONTEND_SOURCE_DIR "/ansible";
}

int run(RunOptions& o) {
  auto e = runner::load_experiment(o.experiment);
  if (!e) {
    return fail(e.error().message);
  }
  if (o.simulate) {
    auto simulated = runner::simulated_workload(e->workload);
    if (!simulated) {
      return fail(simulated.error().message);
    }
    if (e->workload.backend != "emulated") {
      std::fprintf(stderr,
                   "contend run: simulating the %s model with stage times profiled here: fwd %s, bwd %s, %s a tensor\n",
                   e->workload.backend.c_str(), format_duration(simulated->forward).c_str(),
                   format_duration(simulated->backward).c_str(), format_size(simulated->activation_bytes).c_str());
    }
    e->workload = *simulated;
  }
  auto tolerance = parse_fraction(o.tolerance);
  if (!tolerance) {
    return fail("--tolerance: " + tolerance.error().message);
  }
  std::optional<runner::Summary> reference;
  if (!o.compare.empty()) {
    auto s = runner::read_summary(o.compare);
    if (!s) {
      return fail(s.error().message);
    }
    reference = std::move(*s);
  }
  std::string dir = o.resume.empty() ? o.out : o.resume;
  if (dir.empty()) {
    dir = "results/" + e->name + "-" + timestamp() + (o.simulate ? "-sim" : "");
  }
  if (o.resume.empty() && fs::exists(dir)) {
    return fail(dir + " exists: results are never overwritten (choose another --out, or --resume " + dir + ")");
  }
  if (!o.resume.empty() && !fs::exists(dir + "/env.json")) {
    return fail("--resume " + dir + ": not a results directory (no env.json)");
  }
  std::error_code ec;
  fs::create_directories(dir + "/runs", ec);
  fs::create_directories(dir + "/events", ec);
  fs::create_directories(dir + "/traces", ec);
  if (ec) {
    return fail("create " + dir + ": " + ec.message());
  }
  if (o.resume.empty()) {
    if (auto ok = write_file_atomic(dir + "/env.json", env_json(o, *e).dump(2) + "\n"); !ok) {
      return fail(ok.error().message);
    }
  }
  const auto& stop = install_stop_handlers();
  const std::vector<runner::Cell> cells = runner::expand(*e);
  std::map<std::string, double> done = o.resume.empty() ? std::map<std::string, double>{} : finished_cells(dir);
  std::vector<std::vector<RateTrace>> truths;
  for (const auto& s : e->scenarios) {
    auto t = runner::workload_rates(s);
    if (!t) {
      return fail(t.error().message);
    }
    truths.push_back(std::move(*t));
  }
  runner::HostsOptions hosts{o.hosts, ansible_dir(), fs::absolute(dir).string(), o.ansible_vars};
  runner::LaunchOptions launch;
  launch.contend = fs::read_symlink("/proc/self/exe").string();
  Progress progress(cells.size());
  const std::string where = o.simulate         ? "simulated"
                            : !o.hosts.empty() ? "on the hosts of " + o.hosts
                                               : "real, in network namespaces";
  std::fprintf(stderr, "contend run: %s, %zu cells (%s), results in %s\n", e->name.c_str(), cells.size(), where.c_str(),
               dir.c_str());
  int status = 0;
  std::size_t ran = 0;
  for (std::size_t i = 0; i < cells.size() && !stop.load(); ++i) {
    const runner::Cell& cell = cells[i];
    if (done.count(cell.id) != 0) {
      continue;
    }
    progress.cell(i, cell.id, ran++);
    runner::CellFiles files{dir + "/runs/" + cell.id + ".jsonl", dir + "/events/" + cell.id + ".jsonl",
                            dir + "/runs/" + cell.id + ".log", ""};
    if (cell.repetition == 0) {
      files.trace_prefix = dir + "/traces/" + cell.id;
    }
    fs::remove(files.metrics, ec);
    if (o.simulate) {
      auto rows = runner::simulate_cell(e->workload, cell.schedule, truths[cell.scenario]);
      if (!rows) {
        progress.end();
        return fail(cell.id + ": " + rows.error().message);
      }
      if (auto ok = runner::write_simulated_cell(files, files.trace_prefix.empty() ? "" : files.trace_prefix + ".json",
                                                 *e, cell, *rows);
          !ok) {
        progress.end();
        return fail(ok.error().message);
      }
    } else if (auto ok = o.hosts.empty() ? runner::run_cell(*e, cell, files, launch, stop)
                                         : runner::run_cell_hosts(*e, cell, files, hosts, stop);
               !ok) {
      progress.end();
      if (stop.load()) {
        break;
      }
      return fail(cell.id + ": " + ok.error().message);
    }
    auto throughput = runner::cell_throughput(files.metrics, e->workload);
    if (!throughput) {
      progress.end();
      return fail(throughput.error().message);
    }
    done[cell.id] = *throughput;
    std::ofstream(dir + "/cells.jsonl", std::ios::app)
        << nlohmann::json{{"id", cell.id}, {"throughput", *throughput}}.dump() << "\n";
  }
  progress.end();
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<double>> throughput;
  for (const auto& cell : cells) {
    const auto key = std::pair{e->scenarios[cell.scenario].name, cell.schedule};
    if (cell.repetition == 0) {
      order.push_back(key);
    }
    if (auto it = done.find(cell.id); it != done.end()) {
      throughput[key].push_back(it->second);
    }
  }
  const auto summary = runner::summarize(e->name, e->baseline, o.simulate ? "simulated" : "real", order, throughput);
  auto summary_doc = runner::summary_json(summary);
  runner::describe_experiment(summary_doc, *e);
  if (auto ok = write_file_atomic(dir + "/summary.json", summary_doc.dump(2) + "\n"); !ok) {
    return fail(ok.error().message);
  }
  if (auto ok = write_file_atomic(dir + "/summary.csv", runner::summary_csv(summary)); !ok) {
    return fail(ok.error().message);
  }
  std::cout << runner::summary_table(summary);
  if (stop.load()) {
    std::fprintf(stderr, "contend run: stopped; %zu of %zu cells done, kept in %s (continue with --resume %s)\n",
                 done.size(), cells.size(), dir.c_str(), dir.c_str());
    return 128 + stop_signal();
  }
  std::printf("results: %s\n", dir.c_str());
  if (!o.no_report) {
    draw_report(dir);
  }
  if (reference) {
    const auto regressions = runner::compare(summary, *reference, *tolerance);
    if (!regressions.empty()) {
      std::printf("\n%zu regression(s) against %s (tolerance %s):\n%s", regressions.size(), o.compare.c_str(),
                  o.tolerance.c_str(), runner::regression_table(regressions).c_str());
      status = 3;
    } else {
      std::printf("no regression against %s (tolerance %s)\n", o.compare.c_str(), o.tolerance.c_str());
    }
  }
  return status;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* r = app.add_subcommand("run", "Run an experiment: every scenario x schedule x repetition, then a summary");
  r->add_option("experiment", o->experiment, "Experiment file (contend.experiment/1, docs/experiment-format.md)")
      ->required()
      ->check(CLI::ExistingFile);
  r->add_option("--out", o->out, "Results directory, must not exist (default results/NAME-TIMESTAMP)");
  r->add_option("--resume", o->resume, "Continue an interrupted run in this directory, skipping finished cells");
  r->add_flag("--simulate", o->simulate, "Run the matrix in the simulator (no root, any scale) instead of for real");
  r->add_option("--compare", o->compare, "Reference summary.json: exit 3 when a speedup fell by more than --tolerance");
  r->add_option("--hosts", o->hosts,
                "Run on cluster hosts: an Ansible inventory whose `nodes` group lists them in pipeline order "
                "(ansible/README.md)")
      ->check(CLI::ExistingFile);
  r->add_option("--ansible-var", o->ansible_vars, "KEY=VALUE passed to the playbooks with -e (repeat)");
  r->add_flag("--no-report", o->no_report, "Do not draw the figures at the end (contend report DIR does)");
  r->add_option("--tolerance", o->tolerance,
                "Allowed fall of a speedup for --compare (percent or fraction; default 5%)");
  r->get_option("--out")->excludes(r->get_option("--resume"));
  r->get_option("--hosts")->excludes(r->get_option("--simulate"));
  return [o] {
    o->argv = own_argv();
    return run(*o);
  };
}

}  // namespace contend::tools
