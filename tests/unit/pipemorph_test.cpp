// PipeMorph's published rule (the Adaptra artifact's get_adapted_warmup_fwds) and the baseline
// policy that feeds it in-band measurements.

#include <catch2/catch.hpp>

#include "contend/pipeline/policy/policy.h"
#include "contend/schedule/registry.h"

using namespace contend;
using namespace contend::pipeline;

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
  constexpr std::uint64_t kAct = 1u << 20;
  auto spec = parse_schedule_or_policy("pipemorph");
  REQUIRE(spec.ok());
  auto policy = make_policy(*spec, PolicyContext{kP, kM, std::nullopt, {}, {}, {}});
  REQUIRE(policy.ok());
  // Before anything is measured: no delay, the healthy rule's 7 5 3 1 (ZB-H1's 3 2 1 0 plus 3 2 1 0).
  auto first = (*policy)->decide(0, {});
  REQUIRE(first.ok());
  CHECK(first->schedule == schedule::zb_spec({3, 2, 1, 0}));
  // Link 2-3 stalls each tensor by 60 ms on the sender's clock; the links run at 10 Gbit/s.
  std::vector<StageReport> reports(kP);
  const double wire_s = 8.0 * kAct / 10e9;
  for (int r = 0; r < kP; ++r) {
    reports[r].forward_s = 0.036;
    reports[r].backward_s = 0.072;
    reports[r].message_bytes = kAct;
    reports[r].stash_bytes = kAct;
    const TransferTotals t{kM * kAct, kM * wire_s, kM, kM * kAct, kM * wire_s, 0, 4 * kAct, 4 * wire_s, 0};
    const SendTotals plain{kM * kAct, kM * wire_s, kM};
    const SendTotals stalled{kM * kAct, kM * (wire_s + 0.060), kM};
    if (r > 0) {
      reports[r].from_prev = t;
      reports[r].to_prev = r == 3 ? stalled : plain;
    }
    if (r + 1 < kP) {
      reports[r].from_next = t;
      reports[r].to_next = r == 2 ? stalled : plain;
    }
  }
  auto d = (*policy)->decide(1, reports);
  REQUIRE(d.ok());
  // 9 7 5 1 forwards first (as the AE run's), as slack over ZB-H1: 5 4 3 0.
  CHECK(d->schedule == schedule::zb_spec({5, 4, 3, 0}));
  REQUIRE(d->stall_s.size() == 3);
  CHECK(d->stall_s[2] == Approx(0.060));
  CHECK(d->stall_s[0] == 0);
  // On 1F1B instead: the same warm-ups as slack over 1F1B's.
  auto on_1f1b = make_policy(parse_schedule_or_policy("pipemorph:base=1f1b").value(), PolicyContext{kP, kM, {}, {}, {}, {}});
  REQUIRE(on_1f1b.ok());
  (void)(*on_1f1b)->decide(0, {});
  CHECK((*on_1f1b)->decide(1, reports)->schedule == schedule::kfkb_spec(1, {5, 4, 3, 0}));
}
