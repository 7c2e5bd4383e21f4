#include <algorithm>
#include <catch2/catch.hpp>

#include "contend/schedule/generators.h"
#include "contend/schedule/validation.h"
#include "schedule_checks.h"

using namespace contend;
using namespace contend::schedule;

using test::require_valid;

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

namespace {
// 1F1B with every B split into I and W (W right after its I): the smallest zero-bubble-shaped
// schedule, for the rules of the split backward.
Schedule split_1f1b(int p, int m) {
  Schedule s = one_f_one_b(p, m);
  for (auto& actions : s.ranks) {
    std::vector<Action> out;
    for (const Action& a : actions) {
      if (a.op == Op::kBackward) {
        out.push_back({a.stage, Op::kBackwardInput, a.microbatch});
        out.push_back({a.stage, Op::kBackwardWeight, a.microbatch});
      } else {
        out.push_back(a);
      }
    }
    actions = std::move(out);
  }
  return s;
}

// A hand-made V schedule on 2 ranks (rank 0: stages 0 and 3, rank 1: stages 1 and 2), GPipe-like.
Schedule v_gpipe(int m) {
  Schedule s{"v", 2, 4, m, std::vector<std::vector<Action>>(2), v_placement(2)};
  for (int r = 0; r < 2; ++r) {
    const int down = r;
    const int up = 3 - r;
    for (int mb = 0; mb < m; ++mb) {
      s.ranks[r].push_back({down, Op::kForward, mb});
    }
    for (int mb = 0; mb < m; ++mb) {
      s.ranks[r].push_back({up, Op::kForward, mb});
    }
    for (int mb = 0; mb < m; ++mb) {
      s.ranks[r].push_back({up, Op::kBackward, mb});
    }
    for (int mb = 0; mb < m; ++mb) {
      s.ranks[r].push_back({down, Op::kBackward, mb});
    }
  }
  return s;
}
}  // namespace

TEST_CASE("a split backward (I, then W) validates in place of B, lowered or not", "[validation]") {
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 9; ++m) {
      INFO("p=" << p << " m=" << m);
      require_valid(split_1f1b(p, m));
    }
  }
}

TEST_CASE("the stash of a split backward is held until W, not until I", "[validation]") {
  Schedule s = split_1f1b(2, 2);
  CHECK(peak_inflight(s) == peak_inflight(one_f_one_b(2, 2)));
  // Defer rank 1's W of micro-batch 0 past its next forward: two activations held, not one.
  auto& r1 = s.ranks[1];                                        // 1F0 1I0 1W0 1F1 1I1 1W1
  std::rotate(r1.begin() + 2, r1.begin() + 3, r1.begin() + 4);  // 1F0 1I0 1F1 1W0 ...
  REQUIRE(r1[3] == Action{1, Op::kBackwardWeight, 0});
  CHECK(peak_inflight(s)[1] == 2);
  CHECK(validate(s)->peak_inflight[1] == 2);
}

TEST_CASE("split backwards out of order, incomplete or mixed with B are named", "[validation]") {
  Schedule w_first = split_1f1b(2, 1);
  std::swap(w_first.ranks[1][1], w_first.ranks[1][2]);  // 1W0 before 1I0
  CHECK(validate(w_first).error().message ==
        "1f1b: rank 1, action 1 (1W0): weight gradient of micro-batch 0 before its input gradient (I) on stage 1");

  Schedule i_first = split_1f1b(2, 1);
  std::swap(i_first.ranks[1][0], i_first.ranks[1][1]);  // 1I0 before 1F0
  CHECK_THAT(validate(i_first).error().message,
             Catch::Contains("(1I0): input gradient of micro-batch 0 before its forward on stage 1"));

  Schedule no_w = split_1f1b(2, 1);
  no_w.ranks[0].pop_back();  // drop 0W0
  CHECK_THAT(validate(no_w).error().message, Catch::Contains("rank 0 lacks 0W0 (its input gradient 0I0 is there)"));

  Schedule mixed = split_1f1b(2, 1);
  mixed.ranks[0].push_back({0, Op::kBackward, 0});
  CHECK_THAT(validate(mixed).error().message,
             Catch::Contains("(0B0): micro-batch 0 on stage 0 has both a full backward (B) and a split one"));

  Schedule none = split_1f1b(2, 1);
  none.ranks[1].resize(1);  // only 1F0
  CHECK_THAT(validate(none).error().message, Catch::Contains("rank 1 lacks 1B0 (or 1I0 and 1W0)"));
}

TEST_CASE("lowering sends the input gradient after I, and W sends nothing", "[validation]") {
  const Schedule s = lower(split_1f1b(2, 1));
  const std::vector<Action> rank1 = {{1, Op::kRecvF, 0},
                                     {1, Op::kForward, 0},
                                     {1, Op::kBackwardInput, 0},
                                     {1, Op::kSendB, 0},
                                     {1, Op::kBackwardWeight, 0}};
  const std::vector<Action> rank0 = {{0, Op::kForward, 0},
                                     {0, Op::kSendF, 0},
                                     {0, Op::kRecvB, 0},
                                     {0, Op::kBackwardInput, 0},
                                     {0, Op::kBackwardWeight, 0}};
  CHECK(s.ranks[0] == rank0);
  CHECK(s.ranks[1] == rank1);
  CHECK(lower(s) == s);  // a lowered schedule is kept, not lowered twice
}

TEST_CASE("a V placement validates, lowers with local hand-offs at the turn, and names its deadlocks", "[validation]") {
  const Schedule v = v_gpipe(3);
  require_valid(v);
  CHECK(v.peers_of(0) == std::vector<int>{1});
  const Schedule low = lower(v);
  // Stage 1 -> 2 stays on rank 1: no SEND_F after 1F0, none before 2F0.
  CHECK(low.ranks[1][0] == Action{1, Op::kRecvF, 0});
  CHECK(low.ranks[1][1] == Action{1, Op::kForward, 0});
  CHECK(low.ranks[1][2] == Action{1, Op::kRecvF, 1});
  CHECK(std::count_if(low.ranks[1].begin(), low.ranks[1].end(),
                      [](const Action& a) { return a.op == Op::kSendF && a.stage == 1; }) == 0);
  Schedule stuck = v;
  std::reverse(stuck.ranks[0].begin(), stuck.ranks[0].end());  // rank 0 starts with 0B2
  auto r = validate(stuck);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kInvalidArgument);  // B before F is structural
  Schedule crossed = v;
  std::swap(crossed.ranks[0][0], crossed.ranks[0][3]);  // rank 0 waits for 3F0 before any 0F
  auto d = validate(crossed);
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().code == Errc::kDeadlock);
  CHECK_THAT(d.error().message, Catch::Contains("rank 0, action 0 (3F0) waits for 2F0 on rank 1") &&
                                    Catch::Contains("rank 1, action 0 (1F0) waits for 0F0 on rank 0"));
}

TEST_CASE("a placement that names a rank out of range is refused naming the stage", "[validation]") {
  Schedule v = v_gpipe(1);
  v.placement[2] = 5;
  CHECK_THAT(validate(v).error().message, Catch::Contains("stage 2 is placed on rank 5, outside 0..1"));
}

TEST_CASE("validation names CSV columns instead of action indices when given them", "[validation]") {
  Schedule s = one_f_one_b(2, 2);
  std::swap(s.ranks[1][0], s.ranks[1][1]);  // 1B0 before 1F0
  const ActionColumns columns = {{1, 2, 3, 4}, {2, 3, 5, 7}};
  CHECK_THAT(validate(s, columns).error().message, Catch::Contains("rank 1, column 2 (1B0): backward"));
}
