// Every file parser against thousands of mutated copies of the files contend ships or reads
// (scenarios and their traces, experiments, a flow job, schedule CSVs, a results folder's summary, env.json and a list
// of runs, cells and iteration logs, a calibration, the fidelity suite's measurements, /proc/stat): each copy must
// parse or be refused with an error, never crash, hang or allocate without bound. Run it under the asan preset too
// (ASan and UBSan see what a plain build would not). Deterministic: the seed is fixed, and a failure names the file and
// the mutation's index, so `--seed` is not needed to reproduce it.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "contend/common/cpu_times.h"
#include "contend/common/fd.h"
#include "contend/common/rate_trace.h"
#include "contend/emulator/flows/flow_job.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/runner/experiment/experiment.h"
#include "contend/runner/real/launcher.h"
#include "contend/runner/regression/history.h"
#include "contend/runner/results/summary.h"
#include "contend/runner/simulated/calibration.h"
#include "contend/runner/simulated/fidelity.h"
#include "contend/runner/truth/network.h"
#include "contend/schedule/csv.h"
#include "contend/schedule/validation.h"
#include "hosts/racks.h"
#include "job/job_log.h"
#include "results/link_bytes.h"
#include "results/results_dir.h"
#include "results/tenants.h"
#include "results/throughput.h"

// A runaway allocation: no parser needs anything near 1 GiB for a file of at most a few MiB.
// Under ASan an allocation beyond it is reported and aborts; otherwise the address space is capped
// at 4 GiB (ASan reserves far more, so the cap is only set without it), and such an allocation
// throws where a parser cannot have meant it.
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __asan_default_options() {
  return "max_allocation_size_mb=1024:allocator_may_return_null=0";
}
#else
namespace {
const bool kCapped = [] {
  const rlimit cap{rlim_t{4} << 30, rlim_t{4} << 30};
  return ::setrlimit(RLIMIT_AS, &cap) == 0;
}();
}  // namespace
#endif

#if CONTEND_MUTATION_CUDA
#include "contend/pipeline_cuda/plugin.h"
namespace {
// As the contend binary registers it at startup (tools/main.cpp); the plugin is never loaded.
const bool kCudaNamed = [] {
  contend::pipeline_cuda::register_cuda_plugin(true);
  return true;
}();
}  // namespace
#endif

namespace fs = std::filesystem;
using namespace contend;

namespace {

constexpr int kMutantsPerFile = 400;
const std::string kSource = CONTEND_SOURCE_DIR;

std::string text_of(const std::string& path) {
  auto text = read_file(path);
  REQUIRE(text.ok());
  return *text;
}

std::vector<std::string> files_in(const std::string& dir, const std::string& extension) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(kSource + "/" + dir)) {
    if (entry.path().extension() == extension) {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  REQUIRE_FALSE(out.empty());
  return out;
}

// What a mutation puts in: JSON and CSV syntax, and the values that break naive parsers.
const std::vector<std::string> kTokens{"{",
                                       "}",
                                       "[",
                                       "]",
                                       "\"",
                                       ",",
                                       ":",
                                       "\n",
                                       "0",
                                       "-1",
                                       "1e308",
                                       "-1e308",
                                       "1e-320",
                                       "NaN",
                                       "Infinity",
                                       "18446744073709551616",
                                       "9223372036854775807",
                                       "4294967296",
                                       "99999999999",
                                       "0.0000001",
                                       "null",
                                       "true",
                                       "[]",
                                       "{}",
                                       "\"\"",
                                       "\\u0000",
                                       "\\ud800",
                                       "4096PiB",
                                       "1e30Gbit",
                                       "100000000h",
                                       "0s",
                                       "0B",
                                       "-5ms",
                                       "#",
                                       "F9",
                                       "B-1",
                                       "I99999999",
                                       "W0",
                                       "SEND_F",
                                       "RECV_B",
                                       "time_s,rate",
                                       "/",
                                       "0/99999999/0",
                                       "%",
                                       "\xff\xfe"};

// 1 to 3 edits: a byte replaced, a span deleted, a token inserted, a span duplicated, a number
// replaced by an extreme one, or the tail cut.
std::string mutate(std::string text, std::mt19937_64& rng) {
  const auto pick = [&](std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const int edits = 1 + static_cast<int>(pick(3));
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(text.size() + 1);
    switch (pick(6)) {
      case 0:
        if (at < text.size()) {
          text[at] = static_cast<char>(pick(256));
        }
        break;
      case 1:
        text.erase(std::min(at, text.size()), 1 + pick(16));
        break;
      case 2:
        text.insert(at, kTokens[pick(kTokens.size())]);
        break;
      case 3: {
        const std::string span = text.substr(std::min(at, text.size()), 1 + pick(64));
        text.insert(std::min(at, text.size()), span + span);
        break;
      }
      case 4: {
        const std::size_t digit = text.find_first_of("0123456789", at);
        if (digit != std::string::npos) {
          const std::size_t end = text.find_first_not_of("0123456789.", digit);
          text.replace(digit, (end == std::string::npos ? text.size() : end) - digit, kTokens[4 + pick(12)]);
        }
        break;
      }
      default:
        text.resize(std::min(at, text.size()));
        break;
    }
  }
  return text;
}

// Feeds `parse` kMutantsPerFile mutants of `original`; it must return (ok or an error) in time.
void survive(const std::string& name, const std::string& original,
             const std::function<bool(const std::string&)>& parse) {
  std::mt19937_64 rng(std::hash<std::string>{}(fs::path(name).filename().string()));
  int refused = 0;
  for (int i = 0; i < kMutantsPerFile; ++i) {
    const std::string mutant = mutate(original, rng);
    INFO(name << ", mutant " << i);
    const auto start = std::chrono::steady_clock::now();
    if (!parse(mutant)) {
      ++refused;
    }
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
  INFO(name << " itself");
  CHECK(parse(original));  // the shipped file itself parses
  CHECK(refused > 0);      // and the mutants reached the parser's errors
}

// A scratch folder, removed at the end.
struct Scratch {
  std::string dir;
  Scratch() {
    char name[] = "/tmp/contend-mutation-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    dir = name;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& file, const std::string& text) const {
    const std::string path = dir + "/" + file;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
};

const emulator::FileReader kDisk = [](const std::string& path) { return read_file(path); };

}  // namespace

TEST_CASE("scenario files, mutated, parse or are refused", "[mutation]") {
  for (const char* dir : {"emulator/scenarios", "tests/data/scenarios"}) {
    for (const std::string& path : files_in(dir, ".json")) {
      survive(path, text_of(path),
              [&](const std::string& text) { return emulator::parse_scenario(text, path, kDisk).ok(); });
    }
  }
}

TEST_CASE("bandwidth traces, mutated, parse or are refused as the scenario reads them", "[mutation]") {
  const std::string scenario = kSource + "/emulator/scenarios/trace.json";
  const std::string trace = kSource + "/emulator/scenarios/traces/shared-uplink.csv";
  const std::string json = text_of(scenario);
  survive(trace, text_of(trace), [&](const std::string& text) {
    const emulator::FileReader mutated = [&](const std::string&) -> Result<std::string> { return text; };
    return emulator::parse_scenario(json, scenario, mutated).ok();
  });
  survive(trace, text_of(trace), [&](const std::string& text) { return parse_rate_trace_csv(text, trace).ok(); });
}

TEST_CASE("experiment files, mutated, parse or are refused", "[mutation]") {
  Scratch scratch;
  for (const std::string& path : files_in("experiments", ".json")) {
    if (path.ends_with("/measured.json")) {
      continue;  // the fidelity suite's measurements: their own case below
    }
    if (fs::path(path).filename().string().find("-baseline") != std::string::npos) {  // a recorded summary
      survive(path, text_of(path),
              [&](const std::string& text) { return runner::read_summary(scratch.write("summary.json", text)).ok(); });
      continue;
    }
    survive(path, text_of(path), [&](const std::string& text) { return runner::parse_experiment(text, path).ok(); });
  }
}

TEST_CASE("a flow job, mutated, parses or is refused", "[mutation]") {
  const auto run = emulator::load_scenario(kSource + "/emulator/scenarios/steady.json");
  REQUIRE(run.ok());
  const std::string job = R"({"schema": "contend.flow-job/1", "duration": "10s",
 "flows": [
   {"name": "bulk", "from": "n0", "to": "n1", "protocol": "tcp", "streams": 4, "rate": "unlimited",
    "congestion": "cubic", "message_size": "128KiB", "start": "1s", "duration": "5s"},
   {"name": "video", "from": "n2", "to": "n1", "protocol": "udp", "rate": "200Mbit", "on": "2s", "off": "1s"}
 ]})";  // docs/flows.md's example
  survive("docs/flows.md job", job,
          [&](const std::string& text) { return emulator::parse_flow_job(text, "job.json", *run).ok(); });
}

TEST_CASE("a user's job's rank log, mutated, is read into steps by every output parser", "[mutation]") {
  Scratch scratch;
  const std::vector<std::pair<runner::OutputSpec, std::string>> outputs = {
      {{"jsonl", "", "rate", 0, ""}, R"({"schema": "contend.step/1", "step": 3, "samples": 64, "seconds": 0.1834})"},
      {{"megatron", "", "rate", 0, ""},
       " [2024-05-01 10:00:00] iteration       20/     500 | consumed samples:          640 | elapsed time per "
       "iteration (ms): 1234.5 | learning rate: 1.000000E-04 | global batch size:    32 | lm loss: 7.100000E+00 |"},
      {{"torchtitan", "", "rate", 0, ""},
       "[titan] 2025-07-15 13:49:37,123 - root - INFO - \x1b[31mstep: 10  loss:  9.12340  memory: 12.34GiB(15.67%)  "
       "tps: 1,234  tflops: 56.78\x1b[39m"},
      {{"regex", "step time: ([0-9.]+) ms", "milliseconds", 32, ""}, "step time: 412.5 ms"}};
  for (const auto& [output, line] : outputs) {
    std::string log;
    for (int i = 0; i < 4; ++i) {
      log += runner::log_line(100.0 + i, i == 2 ? runner::LogStream::kErr : runner::LogStream::kOut,
                              i == 2 ? "warning: slow" : line);
    }
    // A log is never refused: a line that is no longer a step is skipped. Every step read is a
    // real one, and a mutant that lost a step line counts as refused.
    const std::size_t whole = output.parser == "torchtitan" ? 2 : 3;  // a rate needs a step line before it
    survive("rank log of " + output.parser, log, [&](const std::string& text) {
      const auto steps = runner::job_steps(scratch.write("rank0.log", text), output);
      REQUIRE(steps.ok());
      for (const runner::Interval& step : *steps) {
        CHECK((std::isfinite(step.seconds) && step.seconds > 0 && std::isfinite(step.amount) && step.amount > 0));
      }
      return steps->size() == whole;
    });
  }
}

TEST_CASE("a rank log's failure line, mutated, is read back whole or not at all", "[mutation]") {
  Scratch scratch;
  const std::string log = runner::log_line(100.0, runner::LogStream::kOut, "step 1") +
                          runner::failure_line({7, 101.25, 1764806400.5}) +
                          runner::log_line(101.5, runner::LogStream::kErr, "Traceback (most recent call last):");
  survive("rank log's failure line", log, [&](const std::string& text) {
    const auto failure = runner::command_failure(scratch.write("rank1.log", text));
    if (failure) {  // what is read is a failure: a code a process can exit with, times on the clocks
      CHECK((failure->code >= 1 && failure->code <= 255));
      CHECK((std::isfinite(failure->steady_s) && failure->steady_s >= 0));
      CHECK((std::isfinite(failure->system_s) && failure->system_s >= 0));
    }
    return failure && failure->code == 7 && failure->steady_s == 101.25 && failure->system_s == 1764806400.5;
  });
}

TEST_CASE("schedule CSVs, mutated, parse or are refused, and what parses validates or is refused", "[mutation]") {
  for (const std::string& path : files_in("tests/golden", ".csv")) {
    survive(path, text_of(path), [&](const std::string& text) {
      auto s = schedule::from_csv(text, path);
      return s.ok() && schedule::validate(*s).ok();
    });
  }
}

TEST_CASE("a results folder's files, mutated, are read or refused", "[mutation]") {
  const std::string recorded = kSource + "/tests/data/recorded-run";
  Scratch scratch;
  survive("summary.json", text_of(recorded + "/summary.json"),
          [&](const std::string& text) { return runner::read_summary(scratch.write("summary.json", text)).ok(); });
  const auto cells_read = [&](const std::string& text) {
    scratch.write("cells.jsonl", text);
    return runner::finished_cells(scratch.dir).ok();
  };
  survive("cells.jsonl", text_of(recorded + "/cells.jsonl"), cells_read);
  // A run begun with `run --repetitions` records the count, which its --resume reads back after
  // checking that the folder is the experiment's.
  std::string env = text_of(recorded + "/env.json");
  env.insert(env.find('{') + 1, R"("repetitions": 2,)");
  survive("env.json with repetitions", env, [&](const std::string& text) {
    scratch.write("env.json", text);
    return runner::check_resume(scratch.dir, "recorded", "real", "").ok() &&
           runner::resumed_repetitions(scratch.dir).ok();
  });
  // A cell run on one host also records what it sent over each shaped end.
  survive(
      "cells.jsonl with link_bytes",
      R"({"id":"a.1f1b.r1","throughput":56.9,"steal":0.01,"others_cpu":0.02,"link_bytes":[)"
      R"({"link":"n0-n1","node":"n0","bytes":87762996,"workload":87700000},{"link":"n0-n1","node":"n1","bytes":1024}]})"
      "\n",
      cells_read);
  // And, where its scenario has background flows, what each other tenant got.
  survive("cells.jsonl with tenants",
          R"({"id":"a.1f1b.r1","throughput":27.9,"tenants":[{"tenant":"dp","flows":4,"bps":758912000.5},)"
          R"({"tenant":"bulk","flows":1,"bps":5e7}]})"
          "\n",
          cells_read);
  runner::Workload w;
  w.warmup = 0;
  w.iterations = 1;
  // Windows inside what the recorded cells ran (their rank 0 starts 0.28 s into the scenario).
  for (const auto& entry : fs::directory_iterator(recorded + "/runs")) {
    if (entry.path().extension() != ".jsonl") {
      continue;
    }
    const std::string events = recorded + "/events/" + entry.path().filename().string();
    survive(entry.path().string(), text_of(entry.path().string()), [&](const std::string& text) {
      auto log = runner::read_iteration_log(scratch.write("metrics.jsonl", text));
      if (!log) {
        return false;
      }
      const bool plain = runner::cell_throughput(*log, w).ok();
      const bool windowed =
          fs::exists(events) && runner::cell_throughput(*log, w, runner::MeasureWindow{0.5, 1.0}, events).ok();
      (void)runner::measured_costs(w, {*log});  // the calibration reads the same lines
      return plain || windowed;
    });
    if (fs::exists(events)) {
      const auto log = runner::read_iteration_log(entry.path().string());
      REQUIRE(log.ok());
      survive(events, text_of(events), [&](const std::string& text) {
        return runner::cell_throughput(*log, w, runner::MeasureWindow{0.5, 1.0}, scratch.write("events.jsonl", text))
            .ok();
      });
    }
    break;  // one cell's logs: they all have the same shape
  }
}

TEST_CASE("a history's files, mutated, are read or refused, and a summary that reads is judged", "[mutation]") {
  const std::string recorded = kSource + "/tests/data/recorded-run";
  Scratch scratch;
  const std::string summary = text_of(recorded + "/summary.json");
  scratch.write("run/summary.json", summary);
  survive("env.json", text_of(recorded + "/env.json"), [&](const std::string& text) {
    scratch.write("run/env.json", text);
    return runner::read_run(scratch.dir + "/run").ok();
  });
  scratch.write("run/env.json", text_of(recorded + "/env.json"));
  survive("a list of runs", "# the runs\nrun\n./run  # again\n",
          [&](const std::string& text) { return runner::read_runs({scratch.write("list.txt", text)}).ok(); });
  const auto reference = runner::read_summary(recorded + "/summary.json");
  REQUIRE(reference.ok());
  survive("summary.json, judged", summary, [&](const std::string& text) {
    auto now = runner::read_summary(scratch.write("summary.json", text));
    if (!now) {
      return false;
    }
    for (auto q : {runner::Quantity::kThroughput, runner::Quantity::kSpeedup}) {
      for (bool paired : {false, true}) {  // compare's test, and ab's over its rounds
        runner::VerdictOptions o;
        o.quantity = q;
        o.paired = o.family = paired;
        (void)runner::verdict_table(runner::verdicts(*now, *reference, o), now->unit, o);
      }
    }
    return true;
  });
}

TEST_CASE("a calibration, mutated, is read or refused", "[mutation]") {
  runner::Workload w;
  runner::Calibration c;
  c.forward_s = 0.0101;
  c.backward_s = 0.0203;
  c.runtime.costs = {0.0002, 0.0003};
  c.runtime.latency_s = 0.00012;
  c.runtime.line_bps = 25e9;
  c.workload = pipeline::stage_costs_json(w);
  c.source = "the mutation test";
  Scratch scratch;
  REQUIRE(runner::write_calibration(scratch.dir + "/original.json", c).ok());
  survive("calibration.json", text_of(scratch.dir + "/original.json"), [&](const std::string& text) {
    return runner::read_calibration(scratch.write("calibration.json", text), w).ok();
  });
}

TEST_CASE("the oracle's ground truth, mutated, is read or refused", "[mutation]") {
  auto scenario = emulator::load_scenario(kSource + "/emulator/scenarios/periodic.json");
  REQUIRE(scenario.ok());
  auto links = runner::workload_rates(*scenario);
  REQUIRE(links.ok());
  runner::NetworkTruth truth{*links, {}, *links};
  truth.back[0] = RateTrace::unlimited();  // a way nothing shapes
  truth.stalls[{0, 1}].add_at_time(1.5, 0.03);
  truth.stalls[{0, 1}].add_at_iteration(7, 0.06);
  Scratch scratch;
  REQUIRE(runner::write_truth(scratch.dir + "/original.json", scenario->name, truth).ok());
  survive("truth.json", text_of(scratch.dir + "/original.json"),
          [&](const std::string& text) { return runner::read_truth(scratch.write("truth.json", text)).ok(); });
}

TEST_CASE("the fidelity suite's measurements, mutated, are read or refused", "[mutation]") {
  const std::string path = kSource + "/experiments/suites/fidelity/measured.json";
  survive(path, text_of(path), [&](const std::string& text) { return runner::parse_fidelity(text, path).ok(); });
}

TEST_CASE("/proc/stat, mutated, is read or refused", "[mutation]") {
  // A 2-CPU virtual machine's, fixed so the mutants are the same on every machine.
  const std::string stat =
      "cpu  1966466 24613 417486 2337407 6988 0 26614 58788 0 0\n"
      "cpu0 983233 12306 208743 1168703 3494 0 13307 29394 0 0\n"
      "cpu1 983233 12307 208743 1168704 3494 0 13307 29394 0 0\n"
      "intr 48213 0 9 0 0 0\nctxt 97242\nbtime 1796290000\nprocesses 24519\n";
  survive("/proc/stat", stat, [](const std::string& text) { return parse_cpu_times(text).ok(); });
}

TEST_CASE("an events log's link samples, mutated, are read into bytes per end or refused", "[mutation]") {
  // A two-node link's per-class samples, and a fabric's compact port samples, as the player writes them.
  std::string log = R"({"schema":"contend.events/1","kind":"start","scenario":"two","duration_s":10.0,"steady_s":5.5})"
                    "\n";
  for (int i = 0; i < 2; ++i) {
    for (const char* cls : {"link", "workload", "background"}) {
      log += R"({"schema":"contend.events/1","kind":"sample","t_s":)" + std::to_string(0.1 * (i + 1)) +
             R"(,"link":"a-b","node":"a","class":")" + cls + R"(","rate_bps":2e8,"bytes":)" +
             std::to_string(1000 + 50000 * i) +
             R"(,"packets":3,"drops":0,"overlimits":0})"
             "\n";
    }
  }
  log += R"({"schema":"contend.events/1","kind":"port_index","t_s":0.1,"ports":[{"link":"h0-l0","node":"h0"},)"
         R"({"link":"h0-l0","node":"l0"}]})"
         "\n"
         R"({"schema":"contend.events/1","kind":"ports","t_s":0.2,"kib":[40,2],"drops":[0,0]})"
         "\n";
  Scratch scratch;
  survive("events.jsonl", log,
          [&](const std::string& text) { return runner::port_bytes(scratch.write("events.jsonl", text)).ok(); });
}

TEST_CASE("an events log's flow summaries, mutated, are read into tenants or refused", "[mutation]") {
  std::string log = R"({"schema":"contend.events/1","kind":"start","scenario":"ring","duration_s":10.0})"
                    "\n";
  for (const char* flow : {"dp:h0-h6", "dp:h6-h0", "bulk"}) {
    log += R"({"schema":"contend.events/1","kind":"flow_summary","flow":")" + std::string(flow) +
           R"(","protocol":"tcp","streams":2,"target_bps":0.0,"achieved_bps":190745900.37,"bytes_received":496921744,)"
           R"("bytes_sent":500247440,"active_s":20.84,"ceiling_bps":0.0,"send_path":"","via":"fabric","error":""})"
           "\n";
  }
  Scratch scratch;
  survive("events.jsonl with flows", log,
          [&](const std::string& text) { return runner::tenant_goodput(scratch.write("events.jsonl", text)).ok(); });
}

TEST_CASE("ansible-inventory's list, mutated, is read into racks or refused", "[mutation]") {
  const std::string list = R"({"_meta": {"hostvars": {"n0": {"contend_address": "10.0.1.10"}}},
    "all": {"children": ["ungrouped", "nodes", "control"]}, "control": {"hosts": ["localhost"]},
    "nodes": {"children": ["rack_a", "rack_b"]}, "rack_a": {"hosts": ["n0", "n1"]}, "rack_b": {"hosts": ["n2", "n3"]}})";
  survive("ansible-inventory --list", list,
          [](const std::string& text) { return runner::parse_racks(text, "inventory.yml").ok(); });
}
