#include <algorithm>
#include <catch2/catch.hpp>

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
