// Slackness (Adaptra): kFkB with extra warm-up forwards per stage. docs/schedules.md: Slackness.
#include <catch2/catch.hpp>

#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"
#include "schedule_checks.h"

using namespace contend;
using namespace contend::schedule;

namespace {

// The order slack() would emit for `extra`, without its deadlock check: what the validator judges.
Schedule unchecked(int p, int m, int k, const std::vector<int>& extra) {
  Schedule s{"unchecked", p, p, m, std::vector<std::vector<Action>>(p), {}};
  const std::vector<int> w = slack_warmups(p, m, k, extra);
  for (int r = 0; r < p; ++r) {
    int f = 0;
    int b = 0;
    while (f < w[r]) {
      s.ranks[r].push_back({r, Op::kForward, f++});
    }
    while (f < m) {
      for (const int end = std::min(m, f + k); f < end;) {
        s.ranks[r].push_back({r, Op::kForward, f++});
      }
      for (const int end = std::min(m, b + k); b < end;) {
        s.ranks[r].push_back({r, Op::kBackward, b++});
      }
    }
    while (b < m) {
      s.ranks[r].push_back({r, Op::kBackward, b++});
    }
  }
  return s;
}

// Every vector of `p` entries in [0, top].
std::vector<std::vector<int>> all_extras(int p, int top) {
  std::vector<std::vector<int>> out{{}};
  for (int r = 0; r < p; ++r) {
    std::vector<std::vector<int>> next;
    for (const auto& prefix : out) {
      for (int e = 0; e <= top; ++e) {
        next.push_back(prefix);
        next.back().push_back(e);
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

TEST_CASE("slack with no extra is kFkB exactly (1F1B at k=1)", "[schedule][slack]") {
  for (int p : {1, 2, 4, 5}) {
    for (int m : {1, 3, 8}) {
      for (int k : {1, 2, 3}) {
        INFO("p=" << p << " m=" << m << " k=" << k);
        const auto s = slack(p, m, k, std::vector<int>(p, 0));
        REQUIRE(s.ok());
        CHECK(s->ranks == kfkb(p, m, k).ranks);
        CHECK(s->name == "kfkb:k=" + std::to_string(k));
      }
      CHECK(slack(p, m, 1, {})->ranks == one_f_one_b(p, m).ranks);
    }
  }
}

TEST_CASE("slack is refused exactly where the validator finds a deadlock, and holds min(m, w_s + k)",
          "[schedule][slack]") {
  int refused = 0;
  int ran = 0;
  for (int p : {2, 3, 4}) {
    for (int m : {2, 5, 8}) {
      for (int k : {1, 2}) {
        for (const auto& extra : all_extras(p, 3)) {
          const auto s = slack(p, m, k, extra);
          const bool valid = validate(unchecked(p, m, k, extra)).ok();
          INFO("p=" << p << " m=" << m << " k=" << k << " extra=" << slack_name(k, extra));
          REQUIRE(s.ok() == valid);
          if (!s) {
            CHECK_THAT(s.error().message, Catch::Contains("would deadlock") && Catch::Contains("at most"));
            ++refused;
            continue;
          }
          ++ran;
          const std::vector<int> w = slack_warmups(p, m, k, extra);
          const std::vector<int> peak = test::require_valid(*s);
          for (int r = 0; r < p; ++r) {
            CHECK(peak[r] == std::min(m, w[r] + k));
          }
        }
      }
    }
  }
  CHECK(refused > 0);  // both sides of the rule were exercised
  CHECK(ran > 0);
}

TEST_CASE("slack specs: one entry per rank, canonical text, refusals that say why", "[schedule][slack]") {
  auto spec = parse_schedule("slack:02/2/0/0");
  REQUIRE(spec.ok());
  CHECK(spec->str() == "slack:extra=2/2/0/0");
  auto s = make_schedule(*spec, 4, 8);
  REQUIRE(s.ok());
  CHECK(s->name == "slack:extra=2/2/0/0");
  CHECK(test::require_valid(*s) == std::vector<int>{6, 5, 2, 1});
  CHECK(make_schedule("kfkb:k=2,extra=0/1/0/0", 4, 8)->name == "kfkb:k=2,extra=0/1/0/0");
  CHECK(parse_schedule("kfkb:2")->str() == "kfkb:k=2");  // no extra written, none implied
  CHECK_THAT(make_schedule("slack:1/1/0", 4, 8).error().message,
             Catch::Contains("3 entries") && Catch::Contains("4 ranks"));
  CHECK_THAT(make_schedule("slack:0/2/0/0", 4, 8).error().message,
             Catch::Contains("stage 0") && Catch::Contains("deadlock") && Catch::Contains("at most"));
  CHECK_FALSE(parse_schedule("slack:-1/0").ok());
  CHECK_FALSE(parse_schedule("slack").ok());  // the vector is required
}

TEST_CASE("slack in front of a slow link hides its delay where 1F1B stalls, and costs memory only there",
          "[sim][slack]") {
  // 4 stages, 10 ms forwards, 20 ms backwards; the link between stages 1 and 2 adds 30 ms each way.
  auto config = sim::uniform_config(4, 1, 0.010, 0.020, 1 << 20, {});
  sim::LinkModel slow;
  slow.latency_s = 0.030;
  config.links[{1, 2}] = slow;
  config.links[{2, 1}] = slow;
  const auto run = [&](const std::string& spec) {
    auto r = sim::simulate(make_schedule(spec, 4, 16).value(), config);
    REQUIRE(r.ok());
    return *r;
  };
  const sim::SimResult one = run("1f1b");
  const sim::SimResult grouped = run("kfkb:k=2");
  const sim::SimResult slacked = run("slack:2/2/0/0");
  // 1F1B waits out the 60 ms round trip at every backward of stages 0 and 1; two more forwards in
  // flight there cover it (measured: 0.60 of 1F1B's makespan, kFkB k=2 0.67).
  CHECK(slacked.makespan_s < 0.65 * one.makespan_s);
  CHECK(slacked.makespan_s < grouped.makespan_s);
  const std::vector<int> expected{6, 5, 2, 1};  // 1F1B's 4 3 2 1, plus the extra where it was added
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(slacked.ranks[r].peak_inflight == expected[r]);
    CHECK(slacked.ranks[r].peak_inflight <= grouped.ranks[r].peak_inflight);
  }
  CHECK(slacked.ranks[2].peak_inflight == one.ranks[2].peak_inflight);  // behind the link: no cost
}
