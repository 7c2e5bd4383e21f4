#include <catch2/catch.hpp>

#include "contend/schedule/generators.h"
#include "contend/schedule/validation.h"

using namespace contend;
using namespace contend::schedule;

namespace {
void require_valid(const Schedule& s) {
  auto compute = validate(s);
  if (!compute) {
    FAIL(compute.error().message);
  }
  auto lowered = validate(lower(s));
  if (!lowered) {
    FAIL(lowered.error().message);
  }
  CHECK(compute->peak_inflight == lowered->peak_inflight);
}
}  // namespace

TEST_CASE("every generator's schedule is valid for p in 1..16, m in 1..64 and every k", "[validation]") {
  for (int p = 1; p <= 16; ++p) {
    for (int m = 1; m <= 64; ++m) {
      require_valid(gpipe(p, m));
      require_valid(one_f_one_b(p, m));
      for (int k = 2; k <= m; ++k) {
        require_valid(kfkb(p, m, k));
      }
      for (int v = 2; v <= 4; ++v) {
        auto s = interleaved_1f1b(p, m, v);
        if (m % p == 0) {
          REQUIRE(s.ok());
          require_valid(*s);
        } else {
          CHECK_FALSE(s.ok());
        }
      }
    }
  }
}

TEST_CASE("lowering adds a send after and a receive before every cross-rank transfer", "[validation]") {
  const Schedule s = lower(one_f_one_b(2, 1));
  const std::vector<Action> rank0 = {
      {0, Op::kForward, 0}, {0, Op::kSendF, 0}, {0, Op::kRecvB, 0}, {0, Op::kBackward, 0}};
  const std::vector<Action> rank1 = {
      {1, Op::kRecvF, 0}, {1, Op::kForward, 0}, {1, Op::kBackward, 0}, {1, Op::kSendB, 0}};
  CHECK(s.ranks[0] == rank0);
  CHECK(s.ranks[1] == rank1);
  CHECK(compute_only(s) == one_f_one_b(2, 1));
  // One rank holding two chunks hands activations over locally: nothing to send.
  CHECK_FALSE(lower(*interleaved_1f1b(1, 2, 2)).lowered());
}

TEST_CASE("a backward before its forward is rejected with the stage, action and reason", "[validation]") {
  Schedule s = one_f_one_b(2, 2);
  std::swap(s.ranks[1][0], s.ranks[1][1]);  // 1B0 before 1F0
  auto r = validate(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kInvalidArgument);
  CHECK(r.error().message == "1f1b: rank 1, action 0 (1B0): backward of micro-batch 0 before its forward on stage 1");
}

TEST_CASE("missing, duplicated and misplaced actions are named", "[validation]") {
  Schedule missing = one_f_one_b(2, 2);
  missing.ranks[0].pop_back();
  CHECK_THAT(validate(missing).error().message, Catch::Contains("rank 0 lacks 0B1"));

  Schedule dup = one_f_one_b(2, 2);
  dup.ranks[0].push_back({0, Op::kForward, 1});
  CHECK_THAT(validate(dup).error().message, Catch::Contains("(0F1): appears more than once"));

  Schedule wrong_rank = one_f_one_b(2, 2);
  wrong_rank.ranks[0][0].stage = 1;
  CHECK_THAT(validate(wrong_rank).error().message, Catch::Contains("(1F0): stage 1 runs on rank 1"));

  Schedule out_of_range = one_f_one_b(2, 2);
  out_of_range.ranks[0][0].microbatch = 5;
  CHECK_THAT(validate(out_of_range).error().message, Catch::Contains("micro-batch out of range 0..1"));

  Schedule lowered = lower(one_f_one_b(2, 2));
  lowered.ranks[1].erase(lowered.ranks[1].begin());  // drop 1RECV_F0
  CHECK_THAT(validate(lowered).error().message, Catch::Contains("rank 1 lacks 1RECV_F0"));
}

TEST_CASE("a schedule that waits for a gradient before sending its activation deadlocks", "[validation]") {
  Schedule s = lower(one_f_one_b(2, 1));
  std::swap(s.ranks[0][1], s.ranks[0][2]);  // 0RECV_B0 before 0SEND_F0
  auto r = validate(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kDeadlock);
  CHECK_THAT(r.error().message, Catch::Contains("rank 0, action 1 (0RECV_B0) waits for 1SEND_B0 on rank 1"));
  CHECK_THAT(r.error().message, Catch::Contains("rank 1, action 0 (1RECV_F0) waits for 0SEND_F0 on rank 0"));
}

TEST_CASE("compute schedules whose order crosses between stages deadlock", "[validation]") {
  // Stage 1 runs micro-batch 1 first, stage 0 insists on 0 first, with stage 0 waiting on 1B0.
  Schedule s = gpipe(2, 2);
  s.ranks[0] = {{0, Op::kForward, 0}, {0, Op::kBackward, 0}, {0, Op::kForward, 1}, {0, Op::kBackward, 1}};
  s.ranks[1] = {{1, Op::kForward, 1}, {1, Op::kBackward, 1}, {1, Op::kForward, 0}, {1, Op::kBackward, 0}};
  auto r = validate(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kDeadlock);
  CHECK_THAT(r.error().message, Catch::Contains("(0B0) waits for 1B0 on rank 1"));
}
