#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "contend/schedule/generators.h"
#include "contend/schedule/validation.h"

using namespace contend::schedule;

namespace {
std::vector<Action> ops(std::initializer_list<const char*> texts, int stage) {
  std::vector<Action> out;
  for (const char* t : texts) {
    out.push_back({stage, t[0] == 'F' ? Op::kForward : Op::kBackward, std::atoi(t + 1)});
  }
  return out;
}
}  // namespace

TEST_CASE("kFkB with k=1 is exactly 1F1B", "[schedule]") {
  for (int p = 1; p <= 16; ++p) {
    for (int m = 1; m <= 64; m += (m < 8 ? 1 : 7)) {
      INFO("p=" << p << " m=" << m);
      CHECK(kfkb(p, m, 1).ranks == one_f_one_b(p, m).ranks);
    }
  }
}

TEST_CASE("kFkB with k >= m is exactly GPipe", "[schedule]") {
  for (int p = 1; p <= 16; ++p) {
    for (int m = 1; m <= 64; m += (m < 8 ? 1 : 7)) {
      INFO("p=" << p << " m=" << m);
      CHECK(kfkb(p, m, m).ranks == gpipe(p, m).ranks);
      CHECK(kfkb(p, m, m + 3).ranks == gpipe(p, m).ranks);
    }
  }
}

TEST_CASE("1F1B on 4 stages matches the textbook order", "[schedule]") {
  const Schedule s = one_f_one_b(4, 6);
  CHECK(s.ranks[0] == ops({"F0", "F1", "F2", "F3", "B0", "F4", "B1", "F5", "B2", "B3", "B4", "B5"}, 0));
  CHECK(s.ranks[3] == ops({"F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3", "F4", "B4", "F5", "B5"}, 3));
}

TEST_CASE("kFkB with k not dividing m ends with a partial group", "[schedule]") {
  // p=3, m=7, k=3: groups {0,1,2}, {3,4,5}, {6}.
  const Schedule s = kfkb(3, 7, 3);
  CHECK(s.ranks[0] == ops({"F0", "F1", "F2", "F3", "F4", "F5", "F6", "B0", "B1", "B2", "B3", "B4", "B5", "B6"}, 0));
  CHECK(s.ranks[1] == ops({"F0", "F1", "F2", "F3", "F4", "F5", "B0", "B1", "B2", "F6", "B3", "B4", "B5", "B6"}, 1));
  CHECK(s.ranks[2] == ops({"F0", "F1", "F2", "B0", "B1", "B2", "F3", "F4", "F5", "B3", "B4", "B5", "F6", "B6"}, 2));
}

TEST_CASE("kFkB holds at most min(m, k(p-s)) activations on stage s", "[schedule]") {
  for (int p : {1, 2, 4, 8, 16}) {
    for (int m : {1, 3, 8, 13, 64}) {
      for (int k = 1; k <= m + 1; ++k) {
        const auto peaks = peak_inflight(kfkb(p, m, k));
        for (int s = 0; s < p; ++s) {
          INFO("p=" << p << " m=" << m << " k=" << k << " s=" << s);
          CHECK(peaks[s] == std::min(m, k * (p - s)));
        }
      }
    }
  }
}

TEST_CASE("every generator runs each (stage, micro-batch) forward and backward exactly once", "[schedule]") {
  for (const Schedule& s : {gpipe(3, 5), one_f_one_b(3, 5), kfkb(3, 5, 2), *interleaved_1f1b(3, 6, 2)}) {
    INFO(s.name);
    std::size_t computes = 0;
    for (int r = 0; r < s.num_ranks; ++r) {
      computes += s.ranks[r].size();
      for (const Action& a : s.ranks[r]) {
        CHECK(s.rank_of(a.stage) == r);
      }
    }
    CHECK(computes == static_cast<std::size_t>(2 * s.num_stages * s.num_microbatches));
  }
}

TEST_CASE("interleaved 1F1B visits chunks in groups of p micro-batches, as Megatron-LM does", "[schedule]") {
  auto s = interleaved_1f1b(2, 4, 2);
  REQUIRE(s.ok());
  CHECK(s->num_stages == 4);
  // Rank 0 holds stages 0 and 2; warm-up 2*(p-1) + (v-1)*p = 4 forwards.
  const std::vector<Action> expected = {
      {0, Op::kForward, 0},  {0, Op::kForward, 1},  {2, Op::kForward, 0},  {2, Op::kForward, 1},
      {0, Op::kForward, 2},  {2, Op::kBackward, 0}, {0, Op::kForward, 3},  {2, Op::kBackward, 1},
      {2, Op::kForward, 2},  {0, Op::kBackward, 0}, {2, Op::kForward, 3},  {0, Op::kBackward, 1},
      {2, Op::kBackward, 2}, {2, Op::kBackward, 3}, {0, Op::kBackward, 2}, {0, Op::kBackward, 3}};
  CHECK(s->ranks[0] == expected);
  CHECK(peak_inflight(*s)[0] == 5);
}

namespace {
// "0F0 2F1 1I0 3W2 ..." -> actions.
std::vector<Action> parse_list(const std::string& text) {
  std::vector<Action> out;
  std::istringstream in(text);
  for (std::string cell; in >> cell;) {
    out.push_back(*parse_action(cell));
  }
  return out;
}
}  // namespace

TEST_CASE("interleaved with group=G runs G micro-batches through each chunk before the next chunk", "[schedule]") {
  // p=2, m=4, v=2, group=4: one group; rank 0 warms up with 2*(p-1) + (v-1)*4 = 6 forwards.
  auto s = interleaved_1f1b(2, 4, 2, 4);
  REQUIRE(s.ok());
  CHECK(s->name == "interleaved:v=2,group=4");
  CHECK(s->ranks[0] == parse_list("0F0 0F1 0F2 0F3 2F0 2F1 2F2 2B0 2F3 2B1 2B2 2B3 0B0 0B1 0B2 0B3"));
  CHECK(peak_inflight(*s)[0] == 7);
  // group = p is the default: today's interleaved, which is PyTorch's Interleaved1F1B when p | m.
  CHECK(interleaved_1f1b(4, 8, 2, 4)->ranks == interleaved_1f1b(4, 8, 2)->ranks);
}

TEST_CASE("interleaved refuses the groups Megatron-LM refuses, saying which condition", "[schedule]") {
  CHECK_THAT(interleaved_1f1b(4, 8, 2, 9).error().message,
             Catch::Contains("must not exceed the number of micro-batches (8)"));
  CHECK_THAT(interleaved_1f1b(4, 8, 2, 3).error().message, Catch::Contains("at least the number of ranks (4)"));
  CHECK_THAT(interleaved_1f1b(4, 10, 2, 4).error().message, Catch::Contains("m mod group = 2"));
  CHECK(interleaved_1f1b(4, 10, 2, 5).ok());  // PyTorch's 2 rounds of 5
  CHECK(interleaved_1f1b(4, 3, 2, 3).ok());   // PyTorch's one round of m < p
}

TEST_CASE("zb on one chunk is ZB-H1: rank r defers r weight gradients", "[schedule]") {
  auto s = interleaved_zero_bubble(2, 2, 1);
  REQUIRE(s.ok());
  CHECK(s->ranks[0] == parse_list("0F0 0F1 0I0 0W0 0I1 0W1"));
  CHECK(s->ranks[1] == parse_list("1F0 1I0 1F1 1I1 1W0 1W1"));
}

TEST_CASE("zb with slack warms each rank up with its extra forwards and refuses warm-ups that grow", "[schedule]") {
  // PipeMorph's rule for 4 stages with no delay: 7 5 3 1 forwards before the first backward,
  // ZB-H1's 3 2 1 0 warm-ups plus 3 2 1 0.
  auto s = interleaved_zero_bubble(4, 12, 1, {3, 2, 1, 0});
  REQUIRE(s.ok());
  CHECK(s->name == "zb:extra=3/2/1/0");
  const auto forwards_first = [&](int r) {
    int n = 0;
    for (const Action& a : s->ranks[r]) {
      if (a.op != Op::kForward) {
        break;
      }
      ++n;
    }
    return n;
  };
  CHECK(forwards_first(0) == 7);
  CHECK(forwards_first(1) == 5);
  CHECK(forwards_first(3) == 1);
  CHECK(validate(lower(*s)).ok());
  CHECK(peak_inflight(*s)[0] > peak_inflight(interleaved_zero_bubble(4, 12, 1).value())[0]);
  // Capped at m, and still valid.
  CHECK(validate(lower(interleaved_zero_bubble(4, 12, 1, {50, 40, 30, 20}).value())).ok());
  CHECK_THAT(interleaved_zero_bubble(4, 12, 1, {0, 3, 0, 0}).error().message, Catch::Contains("stage 0"));
  CHECK_THAT(interleaved_zero_bubble(4, 12, 1, {0, 0}).error().message, Catch::Contains("one entry per rank"));
  CHECK_THAT(interleaved_zero_bubble(4, 12, 2, {0, 0, 0, 0}).error().message, Catch::Contains("v=1"));
}

TEST_CASE("looped BFS runs chunk by chunk and its backwards last micro-batch first", "[schedule]") {
  const Schedule s = looped_bfs(2, 2, 2);
  CHECK(s.ranks[1] == parse_list("1F0 1F1 3F0 3F1 3B1 3B0 1B1 1B0"));
}

TEST_CASE("zbv on 2 ranks fills the V: first chunk ahead, I and W paired, the rest at the end", "[schedule]") {
  const Schedule s = zbv(2, 3);
  CHECK(s.ranks[0] == parse_list("0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0I0 0W0 3F2 3I2 3W2 0I1 0W1 0I2 0W2"));
  CHECK(s.ranks[1] == parse_list("1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1I1 2I2 1I2 1W1 2W2 1W2"));
  // With fewer micro-batches than the V needs (2p-1), the missing ones' actions are dropped.
  CHECK(zbv(1, 1).ranks[0] == parse_list("0F0 1F0 1I0 1W0 0I0 0W0"));
}

TEST_CASE("dualpipev runs a forward beside the other chunk's backward, then splits the last backwards", "[schedule]") {
  auto s = dualpipev(1, 2);
  REQUIRE(s.ok());
  CHECK(s->ranks[0] == parse_list("0F0 1F0 0F1 1B0 1F1 0B0 1B1 0I1 0W1"));
  CHECK_THAT(dualpipev(4, 7).error().message, Catch::Contains("(2 x 4 ranks = 8), got 7"));
}
