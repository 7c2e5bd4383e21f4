// PipeMorph's published rule (the Adaptra artifact's get_adapted_warmup_fwds) and the baseline
// policy that feeds it in-band measurements.

#include <algorithm>
#include <catch2/catch.hpp>

#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"

using namespace contend;
using namespace contend::pipeline;

namespace {

// Four stages' reports of one iteration of 12 micro-batches on 10 Gbit/s links, each tensor on
// link 2-3 (both ways) stalled `stall_s` on the sender's clock.
std::vector<StageReport> reports_with_stall(double stall_s) {
  constexpr int kP = 4;
  constexpr int kM = 12;
  constexpr std::uint64_t kAct = 1u << 20;
  std::vector<StageReport> reports(kP);
  const double wire_s = 8.0 * kAct / 10e9;
  for (int r = 0; r < kP; ++r) {
    reports[r].forward_s = 0.036;
    reports[r].backward_s = 0.072;
    reports[r].message_bytes = kAct;
    reports[r].stash_bytes = kAct;
    const TransferTotals t{kM * kAct, kM * wire_s, kM, kM * kAct, kM * wire_s, 0, 4 * kAct, 4 * wire_s, 0};
    const SendTotals plain{kM * kAct, kM * wire_s, kM};
    const SendTotals stalled{kM * kAct, kM * (wire_s + stall_s), kM};
    if (r > 0) {
      reports[r].from_prev = t;
      reports[r].to_prev = r == 3 ? stalled : plain;
    }
    if (r + 1 < kP) {
      reports[r].from_next = t;
      reports[r].to_next = r == 2 ? stalled : plain;
    }
  }
  return reports;
}

bool any_extra(const Decision& d) {
  return std::any_of(d.extra.begin(), d.extra.end(), [](int e) { return e > 0; });
}

}  // namespace

TEST_CASE("the published rule gives the artifact's warm-ups for given delays", "[pipemorph]") {
  const std::vector<double> f(8, 0.009);  // the 14B model's forward, 9 ms a stage
  const auto link = [](int r, double d) {
    std::vector<double> out(7, 0.0);
    out[r] = d;
    return out;
  };
  CHECK(pipemorph_warmups(f, std::vector<double>(7, 0.0), 24) == std::vector<int>{15, 13, 11, 9, 7, 5, 3, 1});
  CHECK(pipemorph_warmups(f, link(0, 0.030), 24) == std::vector<int>{19, 13, 11, 9, 7, 5, 3, 1});
  CHECK(pipemorph_warmups(f, link(6, 0.030), 24) == std::vector<int>{19, 17, 15, 13, 11, 9, 7, 1});
  CHECK(pipemorph_warmups(f, link(6, 0.060), 24) == std::vector<int>{22, 20, 18, 16, 14, 12, 10, 1});
  // The artifact's AE run (A10, 4 stages, 12 micro-batches, 60 ms on link 2-3): its simu.txt holds
  // these warm-ups.
  CHECK(pipemorph_warmups({0.028, 0.036, 0.036, 0.033}, {0, 0, 0.060}, 12) == std::vector<int>{9, 7, 5, 1});
  // Capped at the micro-batches: the artifact's rule would wait forever for a 16th forward of 8.
  CHECK(pipemorph_warmups(f, std::vector<double>(7, 0.0), 8) == std::vector<int>{8, 8, 8, 8, 7, 5, 3, 1});
}

TEST_CASE("pipemorph runs the rule's warm-ups on zero bubble, from the stall it measures in band", "[pipemorph]") {
  constexpr int kP = 4;
  constexpr int kM = 12;
  auto spec = parse_schedule_or_policy("pipemorph");
  REQUIRE(spec.ok());
  auto policy = make_policy(*spec, PolicyContext{kP, kM, std::nullopt, {}, {}, {}});
  REQUIRE(policy.ok());
  // Before anything is measured: no delay, the healthy rule's 7 5 3 1 (ZB-H1's 3 2 1 0 plus 3 2 1 0).
  auto first = (*policy)->decide(0, {});
  REQUIRE(first.ok());
  CHECK(first->schedule == schedule::zb_spec({3, 2, 1, 0}));
  // Link 2-3 stalls each tensor by 60 ms on the sender's clock; the links run at 10 Gbit/s.
  const std::vector<StageReport> reports = reports_with_stall(0.060);
  auto d = (*policy)->decide(1, reports);
  REQUIRE(d.ok());
  // 9 7 5 1 forwards first (as the AE run's), as slack over ZB-H1: 5 4 3 0.
  CHECK(d->schedule == schedule::zb_spec({5, 4, 3, 0}));
  REQUIRE(d->stall_s.size() == 3);
  CHECK(d->stall_s[2] == Approx(0.060));
  CHECK(d->stall_s[0] == 0);
  // On 1F1B instead: the same warm-ups as slack over 1F1B's.
  auto on_1f1b =
      make_policy(parse_schedule_or_policy("pipemorph:base=1f1b").value(), PolicyContext{kP, kM, {}, {}, {}, {}});
  REQUIRE(on_1f1b.ok());
  (void)(*on_1f1b)->decide(0, {});
  CHECK((*on_1f1b)->decide(1, reports)->schedule == schedule::kfkb_spec(1, {5, 4, 3, 0}));
  // Within a limit of 8 micro-batches in flight (or 8 MiB of stashes) per stage, 9 7 5 1 do not
  // fit; the rule for a smaller stall does, its shape kept: 8 6 4 1 (one forward time of stall).
  for (const char* limited : {"pipemorph:inflight=8", "pipemorph:mem=8MiB"}) {
    auto capped = make_policy(parse_schedule_or_policy(limited).value(), PolicyContext{kP, kM, {}, {}, {}, {}});
    REQUIRE(capped.ok());
    (void)(*capped)->decide(0, {});
    CHECK((*capped)->decide(1, reports)->schedule == schedule::zb_spec({4, 3, 2, 0}));
  }
  // Where not even the healthy rule's 7 5 3 1 fits: ZB-H1's own warm-ups.
  auto tight =
      make_policy(parse_schedule_or_policy("pipemorph:inflight=6").value(), PolicyContext{kP, kM, {}, {}, {}, {}});
  REQUIRE(tight.ok());
  (void)(*tight)->decide(0, {});
  CHECK((*tight)->decide(1, reports)->schedule == schedule::zb_spec({0, 0, 0, 0}));
}

TEST_CASE("adaptive, once it has seen a straggler, stays ready for one where that costs no time",
          "[pipemorph][adaptive]") {
  constexpr int kP = 4;
  constexpr int kM = 12;
  const auto policy = [] {
    return make_policy(parse_schedule_or_policy("adaptive:start=lean").value(), PolicyContext{kP, kM, {}, {}, {}, {}})
        .value();
  };
  // Never stalled: the leanest of the fastest, ZB-H1 without extra warm-up.
  auto fresh = policy();
  (void)fresh->decide(0, {});
  const Decision calm = fresh->decide(1, reports_with_stall(0)).value();
  CHECK_FALSE(any_extra(calm));
  // A straggler on link 2-3 is answered at once with extra warm-up; once it is gone, the
  // pipeline keeps warm-up in hand (no slower now, faster if a straggler returns on any link).
  auto seen = policy();
  (void)seen->decide(0, {});
  (void)seen->decide(1, reports_with_stall(0));
  const Decision stalled = seen->decide(2, reports_with_stall(0.060)).value();
  CHECK(stalled.switched);
  CHECK(any_extra(stalled));
  const Decision after = seen->decide(3, reports_with_stall(0)).value();
  CHECK(any_extra(after));
  CHECK_FALSE(after.schedule == calm.schedule);
}

TEST_CASE("a straggler's stall that changes is a change of the network: the choice is made afresh",
          "[pipemorph][adaptive]") {
  // The 14B pipeline (8 stages, 24 micro-batches, 9 ms forwards, 16 ms backwards), its last link
  // stalled 20 ms, then 40 ms: the same choice as a controller that saw only the 40 ms, not the
  // one for 20 ms held by the hysteresis (a message's rate did not move, its stall did).
  constexpr int kP = 8;
  constexpr int kM = 24;
  AdaptiveOptions o;
  o.knobs = Knobs::kBoth;
  o.zero_bubble = true;
  const auto measured = [](double stall_s) {
    Measurements m;
    m.stages.assign(kP, StageMeasurement{0.009, 0.016, 1u << 20, 1u << 20});
    m.links.assign(kP - 1, LinkMeasurement{10e9, 0, 0});
    m.links[kP - 2].stall_s = stall_s;
    return m;
  };
  AdaptiveController moved(kP, kM, o);
  const Decision at_20 = moved.decide(0, measured(0.020)).value();
  const Decision at_40 = moved.decide(1, measured(0.040)).value();
  AdaptiveController only_40(kP, kM, o);
  const Decision direct = only_40.decide(0, measured(0.040)).value();
  CHECK_FALSE(at_20.schedule == direct.schedule);
  CHECK(at_40.schedule == direct.schedule);
}
