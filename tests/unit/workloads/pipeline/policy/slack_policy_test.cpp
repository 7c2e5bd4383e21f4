// Slack as a knob: Adaptra's estimate, the adaptra policy and the joint k x slack search.
#include <catch2/catch.hpp>

#include "contend/pipeline/policy/adaptive.h"
#include "contend/pipeline/policy/policy.h"
#include "unit/workloads/pipeline/policy/fixtures.h"

using namespace contend;
using namespace contend::pipeline;
using namespace contend::policy_tests;

namespace {
// 10 ms forwards, 20 ms backwards, 1 MiB activations; links fast, the one between stages 1 and 2
// 30 ms late each way (a straggling link).
Measurements straggler() {
  Measurements m;
  m.stages.assign(kP, StageMeasurement{0.010, 0.020, 1 << 20, 1 << 20});
  m.links.assign(kP - 1, LinkMeasurement{0, 0, 0});
  m.links[1].latency_s = 0.030;
  return m;
}

AdaptiveOptions knobs(Knobs k, int inflight = 0) {
  AdaptiveOptions o;
  o.knobs = k;
  o.max_inflight = inflight;
  return o;
}
}  // namespace

TEST_CASE("Adaptra's estimate puts slack in front of the slow link only, enough to cover it", "[adaptive][slack]") {
  CHECK(slack_estimate(straggler()) == std::vector<int>{2, 2, 0, 0});  // 60 ms round trip / 30 ms
  Measurements fast = straggler();
  fast.links[1].latency_s = 0;
  CHECK(slack_estimate(fast) == std::vector<int>{0, 0, 0, 0});
  // A slow rate counts like a delay: 1 MiB at 100 Mbit/s is 84 ms each way.
  fast.links[2].goodput_bps = 100e6;
  CHECK(slack_estimate(fast) == std::vector<int>{6, 6, 6, 0});
}

TEST_CASE("adaptra adds slack where the link is slow and keeps k, k-only groups instead", "[adaptive][slack]") {
  AdaptiveController slack(kP, kM, knobs(Knobs::kSlack));
  auto s = slack.decide(0, straggler());
  REQUIRE(s.ok());
  CHECK(s->k == 1);
  REQUIRE(s->extra.size() == kP);
  CHECK(s->extra[0] > 0);
  CHECK(s->extra[1] > 0);
  CHECK(s->extra[2] == 0);
  CHECK(s->extra[3] == 0);
  CHECK(s->schedule.name() == "slack");
  AdaptiveController grouped(kP, kM, knobs(Knobs::kK));
  auto g = grouped.decide(0, straggler());
  REQUIRE(g.ok());
  CHECK(g->k > 1);
  CHECK(g->extra.empty());
  // Both: at least as fast as either, as predicted.
  AdaptiveController joint(kP, kM, knobs(Knobs::kBoth));
  auto j = joint.decide(0, straggler());
  REQUIRE(j.ok());
  const auto time_of = [](const Decision& d) {
    for (const auto& [k, t] : d.predicted_s) {
      if (k == d.k && d.extra.empty()) {
        return t;
      }
    }
    return -1.0;
  };
  CHECK(j->predicted_s.size() < g->predicted_s.size());  // pruned once k's curve flattened
  CHECK_FALSE(j->extra.empty());                         // slack wins here: as fast as k=2 for less memory
  CHECK(time_of(*g) > 0);
}

TEST_CASE("under a per-stage in-flight limit only slack fits: the joint policy finds it, k-only cannot",
          "[adaptive][slack]") {
  // inflight=6: kfkb:k=2 holds 8 on stage 0, slack 2/2/0/0 holds 6 5 2 1.
  AdaptiveController grouped(kP, kM, knobs(Knobs::kK, 6));
  auto g = grouped.decide(0, straggler());
  REQUIRE(g.ok());
  CHECK(g->k == 1);
  CHECK(g->extra.empty());
  AdaptiveController joint(kP, kM, knobs(Knobs::kBoth, 6));
  auto j = joint.decide(0, straggler());
  REQUIRE(j.ok());
  CHECK(j->k == 1);
  REQUIRE_FALSE(j->extra.empty());
  CHECK(*std::max_element(j->extra.begin(), j->extra.end()) <= 2);  // 4 + 2 = 6 on stage 0
}

TEST_CASE("slack does not move on a network that adds nothing, and is given back when the straggler recovers",
          "[adaptive][slack]") {
  Measurements fast = straggler();
  fast.links[1].latency_s = 0;
  AdaptiveController c(kP, kM, knobs(Knobs::kBoth));
  auto first = c.decide(0, fast);
  REQUIRE(first.ok());
  CHECK(first->extra.empty());
  CHECK(first->k == 1);
  auto slow = c.decide(1, straggler());
  REQUIRE(slow.ok());
  CHECK(slow->switched);
  auto back = c.decide(2, fast);
  REQUIRE(back.ok());
  CHECK(back->switched);  // leaner and as fast: no hysteresis needed to give memory back
  CHECK(back->extra.empty());
  CHECK(back->k == 1);
}

TEST_CASE("the slack policies' specs: adaptra is adaptive:knobs=slack, adaptive moves both by default",
          "[adaptive][slack][policy]") {
  CHECK(adaptive_options(*parse_schedule_or_policy("adaptive")).knobs == Knobs::kBoth);
  CHECK(adaptive_options(*parse_schedule_or_policy("adaptive:knobs=k")).knobs == Knobs::kK);
  CHECK(adaptive_options(*parse_schedule_or_policy("adaptra")).knobs == Knobs::kSlack);
  CHECK(adaptive_options(*parse_schedule_or_policy("oracle:knobs=slack")).knobs == Knobs::kSlack);
  CHECK_FALSE(parse_schedule_or_policy("adaptra:chunks=2").ok());
  CHECK_FALSE(parse_schedule_or_policy("adaptive:knobs=all").ok());
  PolicyContext c{kP, kM, std::nullopt, {}, {}, {}};
  auto refused = make_policy(*parse_schedule_or_policy("adaptive:knobs=slack,chunks=2"), c);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("knobs=k"));
  CHECK(make_policy(*parse_schedule_or_policy("adaptra"), c).ok());
}
