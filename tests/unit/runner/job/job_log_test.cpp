#include "job/job_log.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "contend/runner/experiment/experiment.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("a rank log's step lines are steps on the steady clock, other lines are skipped", "[job]") {
  const JobFile log(log_line(100.5, LogStream::kOut, R"({"schema": "contend.step/1", "samples": 32, "seconds": 0.5})") +
                    log_line(100.6, LogStream::kErr, "warning: something") + "garbage without a time\n" +
                    log_line(101.5, LogStream::kOut, R"({"schema": "contend.step/1", "samples": 32, "seconds": 1.0})") +
                    log_line(102.0, LogStream::kOut, R"({"schema": "contend.step/1", "throughput": 40})"));
  const auto steps = job_steps(log.path, OutputSpec{});
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 3);
  CHECK((*steps)[0].start_s == Approx(100.0));
  CHECK((*steps)[1].start_s == Approx(100.5));
  CHECK((*steps)[1].amount == 32);
  // A rate-only step covers the time since the previous step's line: 0.5 s at 40/s.
  CHECK((*steps)[2].start_s == Approx(101.5));
  CHECK((*steps)[2].amount == Approx(20));
  CHECK(rank_log_path("/r/runs/s.v.r1.log", 3) == "/r/runs/s.v.r1.rank3.log");
}

TEST_CASE("lines that print no time are timed by the guard's stamps, the first starting the clock", "[job]") {
  const JobFile log(log_line(10.0, LogStream::kOut, "[GPU0] Epoch 0 | Batchsize: 32 | Steps: 16") +
                    log_line(11.0, LogStream::kOut, "[GPU0] saving checkpoint") +
                    log_line(12.5, LogStream::kOut, "[GPU0] Epoch 1 | Batchsize: 32 | Steps: 16") +
                    log_line(14.5, LogStream::kOut, "[GPU0] Epoch 2 | Batchsize: 32 | Steps: 16"));
  OutputSpec spec;
  spec.parser = "regex";
  spec.pattern = "Epoch [0-9]+ \\|";
  spec.captures = "line";
  spec.amount = 512;
  const auto steps = job_steps(log.path, spec);
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 2);  // epoch 0's line starts the clock: when it began is not printed
  CHECK((*steps)[0].start_s == Approx(10.0));
  CHECK((*steps)[0].seconds == Approx(2.5));
  CHECK((*steps)[0].amount == 512);
  CHECK((*steps)[1].start_s == Approx(12.5));
  CHECK((*steps)[1].seconds == Approx(2.0));
}

TEST_CASE("a guard's failure line says when and how its command failed, read back from the log", "[job]") {
  CHECK_THAT(
      failure_line({139, 12.5, 1764806400.25}),
      Catch::Contains("the command was killed by signal 11 (code 139, at 1764806400.250000 on the system clock)"));
  // What the command's processes print after it failed follows the line; the last one counts, and
  // a malformed one, or one the job printed on stdout or stderr (a forgery naming another code and
  // time), is not one.
  const JobFile log(log_line(10, LogStream::kOut, "step 1") + failure_line({7, 11.25, 1764806401.5}) +
                    log_line(11.3, LogStream::kErr, "a child's last word") +
                    log_line(11.4, LogStream::kGuard,
                             "contend job-rank: the command exited with 9 (code nine, at 1 on the system clock)") +
                    log_line(11.4, LogStream::kGuard,
                             "contend job-rank: the command exited with 9 (code 9, at x on the system clock)") +
                    log_line(11.4, LogStream::kGuard,
                             "contend job-rank: the command exited with 9 (code 9.5, at 1 on the system clock)") +
                    log_line(11.4, LogStream::kGuard,
                             "contend job-rank: the command exited with 9 (code 0x9, at 1 on the system clock)") +
                    log_line(11.4, LogStream::kGuard,
                             "contend job-rank: the command exited with 9 (code  9, at -1 on the system clock)") +
                    log_line(11.4, LogStream::kGuard, "contend job-rank: the command exited with 9 (code 9)") +
                    log_line(11.5, LogStream::kOut,
                             "contend job-rank: the command exited with 3 (code 3, at 1 on the system clock)") +
                    log_line(11.6, LogStream::kErr,
                             "contend job-rank: the command exited with 3 (code 3, at 1 on the system clock)"));
  const auto failure = command_failure(log.path);
  REQUIRE(failure);
  CHECK(failure->steady_s == Approx(11.25));
  CHECK(failure->system_s == Approx(1764806401.5));
  CHECK(failure->code == 7);
  const JobFile fine(log_line(10, LogStream::kOut, "step 1") +
                     log_line(10.5, LogStream::kErr, "the command exited with 3 (code 3)"));
  CHECK_FALSE(command_failure(fine.path));
  CHECK_FALSE(command_failure(fine.path + ".missing"));
}

TEST_CASE("the rank that failed first is the one whose failure line is earliest by the system clock", "[job]") {
  // Ranks on three hosts: their steady clocks have nothing in common, their system clocks agree.
  // Rank 1 failed first; rank 2's peer failed 0.3 s later, rank 0 still ran (no line).
  const std::string cell = "/tmp/contend-job-test-" + std::to_string(::getpid()) + "-first.log";
  const JobFile rank0(log_line(5, LogStream::kOut, "step 1"), rank_log_path(cell, 0));
  const JobFile rank1(log_line(900, LogStream::kOut, "step 1") + failure_line({3, 901, 1764806400.0}),
                      rank_log_path(cell, 1));
  const JobFile rank2(failure_line({1, 20, 1764806400.3}), rank_log_path(cell, 2));
  const auto first = first_failure(cell, 3);
  REQUIRE(first);
  CHECK(first->rank == 1);
  CHECK(first->failure.code == 3);
  CHECK_FALSE(first_failure(cell, 1));  // rank 0 alone: none failed
  CHECK_FALSE(first_failure(cell + ".none", 3));
}

TEST_CASE("a job's throughput leaves out its warm-up and fails clearly on a log with no step", "[job]") {
  std::string text;
  double t = 10;
  for (int i = 0; i < 5; ++i) {
    const double seconds = i == 0 ? 3.0 : 0.5;  // the first step is slow (start-up)
    t += seconds;
    text += log_line(t, LogStream::kOut,
                     R"({"schema": "contend.step/1", "samples": 10, "seconds": )" + std::to_string(seconds) + "}");
  }
  const JobFile events(R"({"schema": "contend.events/1", "kind": "start", "steady_s": 10.0, "duration_s": 60})"
                       "\n");
  const std::string cell_log = events.path + ".cell.log";  // its rank 0 log beside it
  CommandJob job;
  job.warmup = 1;
  std::ofstream(rank_log_path(cell_log, 0)) << text;
  auto throughput = job_throughput(job, cell_log, std::nullopt, events.path);
  REQUIRE(throughput.ok());
  CHECK(*throughput == Approx(20.0));  // 4 steps of 10 in 2 s
  std::ofstream(rank_log_path(cell_log, 0)) << log_line(11, LogStream::kOut, "loss 2.5");
  auto failed = job_throughput(job, cell_log, std::nullopt, events.path);
  std::remove(rank_log_path(cell_log, 0).c_str());
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message, Catch::Contains("rank 0") && Catch::Contains("\"jsonl\" parser matched no line"));
}
