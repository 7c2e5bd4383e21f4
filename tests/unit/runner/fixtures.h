#pragma once
// What the runner's unit tests share: workloads, experiments "in" experiments/, a schedule
// resolved as an experiment resolves it, a scratch file.

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::test {

using runner::Experiment;
using runner::Workload;

// `spec` resolved for `w`'s shape, as an experiment resolves its schedules.
inline pipeline::ScheduleChoice resolved(const Spec& spec, const Workload& w) {
  auto choice = pipeline::resolve_schedule(spec, w.stages, w.microbatches);
  REQUIRE(choice.ok());
  return *choice;
}

// Two emulated stages whose 1 MiB tensors weigh more than their compute on a shaped link.
inline Workload two_stages() {
  Workload w;
  w.stages = 2;
  w.microbatches = 8;
  w.iterations = 3;
  w.warmup = 0;
  w.emulated.forward = std::chrono::milliseconds(2);
  w.emulated.backward = std::chrono::milliseconds(4);
  w.emulated.activation_bytes = 1 << 20;
  return w;
}

// Four stages of 16 micro-batches of 256 KiB, measured from the first iteration.
inline Workload four_stages(int iterations) {
  Workload w;
  w.stages = 4;
  w.microbatches = 16;
  w.iterations = iterations;
  w.warmup = 0;
  w.emulated.activation_bytes = 256 * 1024;
  return w;
}

// An experiment "in" experiments/, so scenario paths resolve against the repository's.
inline Result<Experiment> parse(const std::string& body) {
  return runner::parse_experiment(R"({"schema": "contend.experiment/1", "name": "t", )" + body + "}",
                                  std::string(CONTEND_SOURCE_DIR) + "/experiments/t.json");
}
inline const std::string kGood =
    R"("scenarios": ["../emulator/scenarios/steady.json", "../emulator/scenarios/periodic.json"],
  "workload": {"stages": 4, "microbatches": 8, "fwd": "5ms", "activation": "256KiB"},
  "schedules": ["1f1b", "kfkb:k=2", "adaptive"], "repetitions": 2)";

inline std::string error_of(const std::string& body) {
  auto e = parse(body);
  REQUIRE_FALSE(e.ok());
  return e.error().message;
}

// The workload a worker's options hand it (--workload), decoded as the worker decodes it.
inline Result<Workload> workload_given(const std::vector<std::string>& argv) {
  const auto at = std::find(argv.begin(), argv.end(), "--workload");
  REQUIRE(at + 1 < argv.end());
  return pipeline::parse_workload_json(*(at + 1), "--workload");
}

// A file holding `text`, removed when the value goes.
struct TempFile {
  explicit TempFile(const std::string& text) {
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
  ~TempFile() { ::unlink(name); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  char name[32] = "/tmp/contend-cell-XXXXXX";
};

// A command experiment "in" tests/data/, with its two-node scenarios.
inline Result<Experiment> parse_job(const std::string& body) {
  return runner::parse_experiment(R"({"schema": "contend.experiment/1", "name": "j", )" + body + "}",
                                  std::string(CONTEND_SOURCE_DIR) + "/tests/data/j.json");
}
inline const std::string kJobScenarios =
    R"("scenarios": ["scenarios/two-200Mbit.json", "scenarios/two-50Mbit.json"], )";

inline std::string job_error_of(const std::string& body) {
  auto e = parse_job(kJobScenarios + body);
  REQUIRE_FALSE(e.ok());
  return e.error().message;
}

// Rank `rank` of two, on n0 or n1.
inline runner::RankPlace place_of(int rank) {
  runner::RankPlace p;
  p.rank = rank;
  p.world = 2;
  p.node = rank == 0 ? "n0" : "n1";
  p.address = rank == 0 ? "198.18.0.1" : "198.18.0.2";
  p.ifname = rank == 0 ? "c0-n1" : "c0-n0";
  p.addresses = {"198.18.0.1", "198.18.0.2"};
  p.nodes = {"n0", "n1"};
  p.out = "/r/runs/x.out";
  return p;
}

// NAME's value in an environment of "NAME=VALUE" items; "(unset)" without one.
inline std::string value_of(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& e : env) {
    if (e.rfind(name + "=", 0) == 0) {
      return e.substr(name.size() + 1);
    }
  }
  return "(unset)";
}

// A file holding `text` (at `at`, or a new name), removed with the object.
struct JobFile {
  explicit JobFile(const std::string& text, const std::string& at = "")
      : path(!at.empty() ? at
                         : "/tmp/contend-job-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)) {
    std::ofstream(path) << text;
  }
  ~JobFile() { std::remove(path.c_str()); }
  JobFile(const JobFile&) = delete;
  JobFile& operator=(const JobFile&) = delete;
  std::string path;
  static inline int counter = 0;
};

}  // namespace contend::test
