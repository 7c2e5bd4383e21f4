#include "contend/runner/simulated/simulate.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "contend/runner/simulated/calibration.h"
#include "contend/runner/truth/network.h"
#include "unit/runner/fixtures.h"

using namespace contend;
using namespace contend::runner;
using namespace contend::test;

TEST_CASE("simulated cells follow the clock: a step slows 1F1B and adaptive moves k", "[runner]") {
  const Workload w = four_stages(20);
  const RateTrace step = *RateTrace::from_points({{0, 956e6}, {5, 95.6e6}});
  PipelineLinks links;
  for (int r = 0; r < 3; ++r) {
    links.insert_or_assign({r, r + 1}, step);
  }
  const auto spec = [](const char* text) { return pipeline::parse_schedule_or_policy(text).value(); };
  // A cell whose first iteration starts late (a real cell's start-up) meets the step sooner.
  RuntimeModel late;
  late.start_s = 4.5;
  auto late_cell = simulate_cell(w, resolved(spec("1f1b"), w), links, late);
  REQUIRE(late_cell.ok());
  CHECK(late_cell->iterations.front().start_s == 4.5);
  auto one_cell = simulate_cell(w, resolved(spec("1f1b"), w), links);
  REQUIRE(one_cell.ok());
  CHECK(late_cell->iterations.at(2).iteration_s > 1.2 * one_cell->iterations.at(2).iteration_s);
  const auto* one = &one_cell->iterations;
  CHECK_FALSE(one_cell->last.trace.empty());
  CHECK(one->back().peak_activation_bytes == 4u * 256 * 1024);  // 1F1B: p in flight on stage 0
  REQUIRE(one->size() == 20);
  CHECK((*one)[1].start_s == Approx((*one)[0].iteration_s));
  CHECK(one->back().iteration_s > 1.1 * one->front().iteration_s);
  auto adaptive_cell = simulate_cell(w, resolved(spec("adaptive:knobs=k"), w), links);
  REQUIRE(adaptive_cell.ok());
  const auto* adaptive = &adaptive_cell->iterations;
  CHECK(adaptive->front().k == 1);
  CHECK(adaptive->back().k > 1);
  CHECK(adaptive->back().iteration_s < one->back().iteration_s);
  // The joint policy starts on zero bubble (fast links: no bubble at 1F1B's memory) and leaves it
  // after the step (grouping or slack, whichever is leaner at the same speed).
  auto joint_cell = simulate_cell(w, resolved(spec("adaptive"), w), links);
  REQUIRE(joint_cell.ok());
  CHECK(joint_cell->iterations.front().decision->schedule.str() == "zb");
  CHECK(joint_cell->iterations.back().decision->schedule.str() != "zb");
  CHECK(joint_cell->iterations.back().iteration_s <= 1.01 * adaptive->back().iteration_s);
  auto oracle_cell = simulate_cell(w, resolved(spec("oracle"), w), links);
  REQUIRE(oracle_cell.ok());
  const auto* oracle = &oracle_cell->iterations;
  CHECK(oracle->back().decision->link_bps[0] == Approx(95.6e6));
  // A looped schedule's ring (rank 3 to rank 0): over the link joining them when there is one
  // (its rate counts), else unlimited (the switch).
  auto without = simulate_cell(w, resolved(spec("interleaved:v=2"), w), links);
  links.insert_or_assign({0, 3}, *RateTrace::from_points({{0, 9.56e6}}));
  auto slow_ring = simulate_cell(w, resolved(spec("interleaved:v=2"), w), links);
  REQUIRE(without.ok());
  REQUIRE(slow_ring.ok());
  CHECK(slow_ring->iterations.front().iteration_s > 2 * without->iterations.front().iteration_s);
}

TEST_CASE("beside an adaptive cell the observer and the oracle decide on its reports, timed on its network",
          "[runner]") {
  const Workload w = four_stages(20);
  const RateTrace step = *RateTrace::from_points({{0, 956e6}, {5, 95.6e6}});
  PipelineLinks links;
  for (int r = 0; r < 3; ++r) {
    links.insert_or_assign({r, r + 1}, step);
  }
  const auto choice = [&](const char* text) { return resolved(pipeline::parse_schedule_or_policy(text).value(), w); };
  auto alone = simulate_cell(w, choice("adaptive:kmax=8"), links);
  auto beside = simulate_cell(w, choice("adaptive:kmax=8"), links, {}, true);
  REQUIRE(alone.ok());
  REQUIRE(beside.ok());
  REQUIRE(alone->iterations.size() == beside->iterations.size());
  bool same_choice_seen = false;
  for (std::size_t i = 0; i < beside->iterations.size(); ++i) {
    const SimIteration& row = beside->iterations[i];
    CHECK(alone->iterations[i].shadows.empty());
    CHECK(row.iteration_s == alone->iterations[i].iteration_s);  // the shadows do not touch the cell
    REQUIRE(row.shadows.size() == 2);
    CHECK(row.shadows[0].policy == "observer");
    CHECK(row.shadows[1].policy == "oracle");
    for (const ShadowIteration& shadow : row.shadows) {
      CHECK(shadow.decision.k <= 8);  // the cell's options carried over
      if (shadow.decision.schedule == row.decision->schedule) {
        same_choice_seen = true;
        CHECK(shadow.iteration_s == Approx(row.iteration_s));  // the same schedule on the same network
      }
    }
  }
  CHECK(same_choice_seen);
  // The observer reads the truth as it stands: after the step, its slow rate.
  CHECK(beside->iterations.back().shadows[0].decision.link_bps.at(0) == Approx(95.6e6));
  auto fixed = simulate_cell(w, choice("1f1b"), links, {}, true);
  REQUIRE(fixed.ok());
  CHECK(fixed->iterations.front().shadows.empty());  // a static schedule has no decisions to shadow
}

TEST_CASE("a policy reads each way of a link on its last frames, as the runtime times them", "[runner]") {
  // Under 1F1B the activations' last frames cross link 0 before the cool-down, the gradients'
  // at its end: a drop in the iteration's last twentieth meets only the gradients.
  const Workload w = four_stages(3);
  const auto choice = [&](const char* text) { return resolved(pipeline::parse_schedule_or_policy(text).value(), w); };
  PipelineLinks steady;
  for (int r = 0; r < 3; ++r) {
    steady.insert_or_assign({r, r + 1}, RateTrace::constant(956e6));
  }
  auto plain = simulate_cell(w, choice("adaptive:knobs=k,kmax=1"), steady);  // 1F1B throughout
  REQUIRE(plain.ok());
  const double drop_at = plain->iterations[0].start_s + 0.95 * plain->iterations[0].iteration_s;
  PipelineLinks links = steady;
  links.insert_or_assign({0, 1}, *RateTrace::from_points({{0, 956e6}, {drop_at, 95.6e6}}));
  auto cell = simulate_cell(w, choice("adaptive:knobs=k,kmax=1"), links);
  REQUIRE(cell.ok());
  REQUIRE(cell->iterations.size() == 3);
  CHECK(cell->iterations[0].start_s == plain->iterations[0].start_s);
  // Iteration 1 was decided on iteration 0's frames: the activations' at the rate before the drop
  // (the iteration's last quarter, a fifth of it after the drop, would read 784 Mbit/s).
  const pipeline::Decision& d = *cell->iterations[1].decision;
  REQUIRE(d.link_bps.size() == 3);
  CHECK(d.link_bps[0] == Approx(956e6).epsilon(0.01));
}

TEST_CASE("a drop inside an iteration shrinks the shaper's bucket with the rate, as the shaper does", "[runner]") {
  // At 1 Gbit/s the bucket (4 ms of the rate) holds two 256 KiB tensors, at 100 Mbit/s less than
  // one: a drop 0.1 s into the first iteration slows it, not only the iterations after it.
  Workload w = four_stages(1);
  w.emulated.forward = std::chrono::milliseconds(11);
  w.emulated.backward = std::chrono::milliseconds(22);
  const auto first_iteration = [&](const RateTrace& rate) {
    PipelineLinks links;
    for (int r = 0; r < 3; ++r) {
      links.insert_or_assign({r, r + 1}, rate);
    }
    auto cell = simulate_cell(w, resolved(pipeline::parse_schedule_or_policy("1f1b").value(), w), links);
    REQUIRE(cell.ok());
    return cell->iterations.front().iteration_s;
  };
  const double fast = first_iteration(RateTrace::constant(956e6));
  const double slow = first_iteration(RateTrace::constant(95.6e6));
  const double drop = first_iteration(*RateTrace::from_points({{0, 956e6}, {0.1, 95.6e6}}));
  CHECK(slow > 1.1 * fast);
  CHECK(drop > fast + 0.5 * (slow - fast));  // the bucket at the drop's depth: most of the drop's cost
}

TEST_CASE("on periodic preemption adaptive switches ahead of the drop it predicts, on random drops it only reacts",
          "[runner][predict]") {
  const Workload w = four_stages(80);  // iterations of 0.6-0.7 s: several samples per drop
  // Every link: 956 Mbit/s, 95.6 Mbit/s for 2 s of every 4 s from 1 s.
  std::vector<RateTrace::Point> points{{0, 956e6}};
  for (double t = 1; t < 200; t += 4) {
    points.push_back({t, 95.6e6});
    points.push_back({t + 2, 956e6});
  }
  PipelineLinks periodic;
  for (int r = 0; r < 3; ++r) {
    periodic.insert_or_assign({r, r + 1}, *RateTrace::from_points(points));
  }
  const auto spec = [](const char* text) { return pipeline::parse_schedule_or_policy(text).value(); };
  auto cell = simulate_cell(w, resolved(spec("adaptive"), w), periodic);
  REQUIRE(cell.ok());
  int ahead = 0;  // switched on a prediction while the last measurement still saw the fast link
  int predicted = 0;
  for (const SimIteration& it : cell->iterations) {
    predicted += it.decision->predicted ? 1 : 0;
    if (it.decision->predicted && it.decision->switched && it.decision->link_bps[0] > 500e6 &&
        it.decision->schedule.str() != "kfkb:k=1") {
      ++ahead;
    }
  }
  CHECK(predicted > 40);
  CHECK(ahead > 0);
  auto off = simulate_cell(w, resolved(spec("adaptive:predict=off"), w), periodic);
  REQUIRE(off.ok());
  for (const SimIteration& it : off->iterations) {
    CHECK_FALSE(it.decision->predicted);
  }
  // Random drops (the same lengths, exponential gaps): no period, so no prediction.
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> gap(1.0 / 3);
  std::vector<RateTrace::Point> random{{0, 956e6}};
  for (double t = 1 + gap(rng); t < 200; t += 2 + gap(rng)) {
    random.push_back({t, 95.6e6});
    random.push_back({t + 2, 956e6});
  }
  PipelineLinks noisy;
  for (int r = 0; r < 3; ++r) {
    noisy.insert_or_assign({r, r + 1}, *RateTrace::from_points(random));
  }
  auto reacting = simulate_cell(w, resolved(spec("adaptive"), w), noisy);
  REQUIRE(reacting.ok());
  for (const SimIteration& it : reacting->iterations) {
    CHECK_FALSE(it.decision->predicted);
  }
}
