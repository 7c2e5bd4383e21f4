// The interleaved, zero-bubble and V schedules (PyTorch's schedule zoo) over many shapes: each
// valid, lowered or not, with the peak in-flight docs/schedules.md states; each refused shape
// refused with the condition named; and their simulated makespans where theory gives them.
#include <algorithm>
#include <catch2/catch.hpp>

#include "contend/schedule/csv.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"
#include "contend/sim/simulator.h"
#include "schedule_checks.h"

using namespace contend;
using namespace contend::schedule;
using test::golden;
using test::require_valid;

namespace {
// Megatron-LM's conditions on the group, plus PyTorch's one round of all m < p micro-batches.
bool group_fits(int p, int m, int g) {
  return g <= m && (g >= p || g == m) && (m % g == 0 || m % g >= p);
}
}  // namespace

TEST_CASE("interleaved with any group Megatron allows is valid and holds min(mv, 2(p-r-1) + (v-1)g + 1)",
          "[schedule]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 24; ++m) {
      for (int v = 2; v <= 3; ++v) {
        for (int g : {0, p, p + 1, 2 * p, m, m - 1}) {
          INFO("p=" << p << " m=" << m << " v=" << v << " group=" << g);
          const int group = g == 0 ? p : g;
          auto s = interleaved_1f1b(p, m, v, g);
          if (g == 0 ? m % p != 0 : !group_fits(p, m, group)) {
            CHECK_FALSE(s.ok());
            continue;
          }
          REQUIRE(s.ok());
          const auto peaks = require_valid(*s);
          for (int r = 0; r < p; ++r) {
            CHECK(peaks[r] == std::min(m * v, 2 * (p - r - 1) + (v - 1) * group + 1));
          }
        }
      }
    }
  }
}

TEST_CASE("looped BFS is valid for every shape and holds all m*v activations", "[schedule]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 24; ++m) {
      for (int v = 1; v <= 3; ++v) {
        INFO("p=" << p << " m=" << m << " v=" << v);
        const auto peaks = require_valid(looped_bfs(p, m, v));
        CHECK(peaks == std::vector<int>(p, m * v));
      }
    }
  }
}

TEST_CASE("zb is valid where PyTorch's rounds divide m and holds min(mv, warm-up + 1 + r) on rank r", "[schedule]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 24; ++m) {
      const int rounds = std::max(1, m / p);
      for (int v = 1; v <= 3; ++v) {
        INFO("p=" << p << " m=" << m << " v=" << v);
        auto s = interleaved_zero_bubble(p, m, v);
        REQUIRE(s.ok() == (m % rounds == 0));
        if (!s) {
          CHECK_THAT(s.error().message, Catch::Contains("PyTorch's rounds"));
          continue;
        }
        const auto peaks = require_valid(*s);
        for (int r = 0; r < p; ++r) {
          const int warmup = std::min(m * v, (v - 1) * (m / rounds) + p - 1 - r);
          CHECK(peaks[r] == std::min(m * v, warmup + 1 + r));
        }
      }
    }
  }
}

TEST_CASE("zbv is valid for every shape in V placement and holds min(2p, 2m, m + 1 + r) on rank r", "[schedule]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 24; ++m) {
      INFO("p=" << p << " m=" << m);
      const Schedule s = zbv(p, m);
      CHECK(s.placement == v_placement(p));
      const auto peaks = require_valid(s);
      for (int r = 0; r < p; ++r) {
        CHECK(peaks[r] == std::min({2 * p, 2 * m, m + 1 + r}));
      }
    }
  }
}

TEST_CASE("dualpipev is valid for m >= 2p, holds 2p+1 on every rank, and refuses fewer micro-batches", "[schedule]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 24; ++m) {
      INFO("p=" << p << " m=" << m);
      auto s = dualpipev(p, m);
      REQUIRE(s.ok() == (m >= 2 * p));
      if (!s) {
        CHECK_THAT(s.error().message, Catch::Contains("at least as many micro-batches as stages"));
        continue;
      }
      CHECK(s->placement == v_placement(p));
      CHECK(require_valid(*s) == std::vector<int>(p, 2 * p + 1));
    }
  }
}

TEST_CASE("the zero-bubble and V schedules match their golden CSVs", "[schedule][csv]") {
  CHECK(*to_csv(*interleaved_zero_bubble(2, 4, 2)) == golden("zb_v2_p2_m4.csv"));
  CHECK(*to_csv(zbv(2, 4)) == golden("zbv_p2_m4.csv"));
  CHECK(*to_csv(*dualpipev(2, 4)) == golden("dualpipev_p2_m4.csv"));
  for (const Schedule& s : {*interleaved_zero_bubble(2, 4, 2), zbv(2, 4), *dualpipev(2, 4)}) {
    INFO(s.name);
    auto back = from_csv(*to_csv(s), s.name);
    REQUIRE(back.ok());
    CHECK(*back == s);  // the V placement comes back from where the stages' actions are
  }
}

TEST_CASE("with free communication ZB-H1 takes m(tf+tb) + (p-1)(tf + tI - tW), 1F1B (m+p-1)(tf+tb)", "[sim]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = p; m <= 3 * p; m += p) {
      INFO("p=" << p << " m=" << m);
      const double tf = 1.0;
      const double tb = 2.0;  // I and W 1.0 each (weight_fraction 0.5)
      auto config = sim::uniform_config(p, 1, tf, tb, 0, {});
      auto zb = sim::simulate(*interleaved_zero_bubble(p, m, 1), config);
      REQUIRE(zb.ok());
      CHECK(zb->makespan_s == Approx(m * (tf + tb) + (p - 1) * (tf + 1.0 - 1.0)));
      CHECK(zb->makespan_s <= sim::simulate(one_f_one_b(p, m), config)->makespan_s);
    }
  }
}

TEST_CASE("a V schedule's turn is local: zbv sends over 2p-2 stage boundaries, interleaved over 2p-1", "[sim]") {
  const int p = 4;
  const int m = 8;
  const std::uint64_t bytes = 1000;
  const auto sent = [&](const Schedule& s) {
    auto r = sim::simulate(s, sim::uniform_config(s.num_stages, 2, 1.0, 2.0, bytes, {}));
    REQUIRE(r.ok());
    std::uint64_t total = 0;
    for (const auto& rank : r->ranks) {
      total += rank.bytes_sent;
    }
    return total;
  };
  // Each boundary carries m activations forward and m gradients back.
  CHECK(sent(zbv(p, m)) == (2 * p - 2) * 2 * m * bytes);
  CHECK(sent(*interleaved_1f1b(p, m, 2)) == (2 * p - 1) * 2 * m * bytes);
}
