#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"
#include "contend/sim/chrome_trace.h"
#include "contend/sim/report.h"
#include "contend/sim/simulator.h"

using namespace contend;
using namespace contend::schedule;
using namespace contend::sim;

namespace {
LinkModel link_at(double bps, double latency_s = 0) {
  LinkModel l;
  l.rate = RateTrace::constant(bps);
  l.latency_s = latency_s;
  return l;
}

SimResult run(const Schedule& s, double fwd, double bwd, std::uint64_t bytes = 0, LinkModel link = {}) {
  auto r = simulate(s, uniform_config(s.num_stages, s.chunks_per_rank(), fwd, bwd, bytes, std::move(link)));
  if (!r) {
    FAIL(r.error().message);
  }
  return std::move(*r);
}
}  // namespace

TEST_CASE("with free communication 1F1B takes (m+p-1)(tf+tb) with bubble (p-1)/(m+p-1)", "[sim]") {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int m : {1, 2, 5, 8, 16}) {
      for (auto [tf, tb] : {std::pair{1.0, 2.0}, std::pair{0.01, 0.01}, std::pair{3.0, 1.0}}) {
        INFO("p=" << p << " m=" << m << " tf=" << tf << " tb=" << tb);
        const SimResult r = run(one_f_one_b(p, m), tf, tb);
        CHECK(r.makespan_s == Approx((m + p - 1) * (tf + tb)));
        CHECK(r.bubble_fraction == Approx(double(p - 1) / (m + p - 1)).margin(1e-12));
        CHECK(r.throughput_mb_per_s == Approx(m / r.makespan_s));
      }
    }
  }
}

TEST_CASE("with free communication every kFkB has 1F1B's makespan, only more memory", "[sim]") {
  for (int p : {2, 4, 8}) {
    for (int m : {4, 7, 16}) {
      for (int k = 1; k <= m; ++k) {
        INFO("p=" << p << " m=" << m << " k=" << k);
        CHECK(run(kfkb(p, m, k), 1.0, 2.0).makespan_s == Approx((m + p - 1) * 3.0));
      }
    }
  }
}

TEST_CASE("the simulator's peak memory is min(m, k(p-s)) activations per stage", "[sim]") {
  const std::uint64_t act = 1 << 20;
  for (int k : {1, 2, 3, 8}) {
    const SimResult r = run(kfkb(4, 8, k), 1.0, 2.0, act, link_at(1e9));
    for (int s = 0; s < 4; ++s) {
      INFO("k=" << k << " s=" << s);
      CHECK(r.ranks[s].peak_inflight == std::min(8, k * (4 - s)));
      CHECK(r.ranks[s].peak_memory_bytes == act * static_cast<std::uint64_t>(std::min(8, k * (4 - s))));
    }
  }
}

TEST_CASE("a transfer takes bytes over rate plus latency, each way", "[sim]") {
  // 1 MB = 8 Mbit at 8 Mbit/s: one second per transfer.
  const SimResult r = run(one_f_one_b(2, 1), 0, 0, 1000000, link_at(8e6, 0.010));
  CHECK(r.makespan_s == Approx(2.02));
  CHECK(r.ranks[0].bytes_sent == 1000000);
  CHECK(r.ranks[0].wait_s == Approx(2.02));
  CHECK(r.ranks[1].idle_s == Approx(2.02 - 1.01));
}

TEST_CASE("sends overlap compute, and a link carries its transfers one at a time", "[sim]") {
  // Half-second transfers hide behind one-second forwards (worked out by hand).
  CHECK(run(gpipe(2, 2), 1, 1, 500000, link_at(8e6)).makespan_s == Approx(7.0));
  // Two-second transfers queue: the second forward waits for the link until t=3.
  CHECK(run(gpipe(2, 2), 1, 0, 2000000, link_at(8e6)).makespan_s == Approx(10.0));
}

TEST_CASE("a link following a trace delivers at the rate of each moment", "[sim]") {
  LinkModel l;
  l.rate = *RateTrace::from_points({{0, 8e6}, {0.5, 4e6}});
  // Forward: 4 Mbit by 0.5 s, 4 Mbit more by 1.5 s; backward: 8 Mbit at 4 Mbit/s, done at 3.5 s.
  CHECK(run(one_f_one_b(2, 1), 0, 0, 1000000, l).makespan_s == Approx(3.5));
}

TEST_CASE("a token bucket lets a burst through after the link idles, then holds the rate", "[sim]") {
  LinkModel l = link_at(8e6);
  l.burst_bytes = RateTrace::constant(500000);
  // Forward: 0.5 MB from the full bucket at once, 0.5 MB at 1 MB/s. Backward: the other
  // direction's bucket is full too.
  CHECK(run(one_f_one_b(2, 1), 0, 0, 1000000, l).makespan_s == Approx(1.0));
  // Forwards of 1 s refill the bucket between activations, so both pass at once (rank 1 ends its
  // forwards at 3 s); the two gradients leave back to back at 3 s: the first from the bucket,
  // the second at the rate, 0.5 s.
  CHECK(run(gpipe(2, 2), 1.0, 0, 500000, l).makespan_s == Approx(3.5));
  // The depth in force when a transfer starts holds: a bucket emptied by a new rate at 0.1 s
  // (the gradient leaves at 0.5 s) lets nothing through at once.
  l.burst_bytes = *RateTrace::from_points({{0, 500000}, {0.1, 0}});
  CHECK(run(one_f_one_b(2, 1), 0, 0, 1000000, l).makespan_s == Approx(1.5));
}

TEST_CASE("per-link overrides slow only that link", "[sim]") {
  const Schedule s = one_f_one_b(3, 1);
  auto config = uniform_config(3, 1, 0, 0, 1000000, link_at(8e6));
  CHECK(simulate(s, config)->makespan_s == Approx(4.0));
  config.links[{1, 2}] = link_at(4e6);
  CHECK(simulate(s, config)->makespan_s == Approx(5.0));
}

TEST_CASE("links that share a port carry one transfer at a time between them", "[sim]") {
  // Rank 1 of three sends to both neighbours through one NIC (port 0) and hears both through
  // another (port 1), as a fabric host does; latency 0, so a send's span is its time on the wire.
  const Schedule s = one_f_one_b(3, 8);
  auto config = uniform_config(3, 1, 0.05, 0.1, 1000000, link_at(8e6));
  config.record_trace = true;
  const double apart = simulate(s, config)->makespan_s;
  config.links[{1, 0}] = config.links[{1, 2}] = config.links[{0, 1}] = config.links[{2, 1}] = link_at(8e6);
  config.links[{1, 0}].ports = config.links[{1, 2}].ports = {0};
  config.links[{0, 1}].ports = config.links[{2, 1}].ports = {1};
  auto shared = simulate(s, config);
  REQUIRE(shared.ok());
  CHECK(shared->makespan_s > apart);
  // What the transfers waited for the ports is reported per link, as a receiver would time it.
  CHECK(shared->port_wait_s.count({1, 2}) == 1);
  CHECK(shared->port_wait_s.at({1, 0}) + shared->port_wait_s.at({1, 2}) > 0);
  CHECK(shared->port_wait_s.count({3, 4}) == 0);
  for (const int port_rank : {0, 1}) {
    std::vector<std::pair<double, double>> spans;  // port 0: rank 1's sends; port 1: sends to rank 1
    for (const TraceEvent& e : shared->trace) {
      if (e.lane == Lane::kSend && (port_rank == 0 ? e.rank == 1 : e.peer_rank == 1)) {
        spans.emplace_back(e.start_s, e.end_s);
      }
    }
    REQUIRE(spans.size() == 16);
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
      CHECK(spans[i].first >= spans[i - 1].second - 1e-9);
    }
  }
}

TEST_CASE("a port of two slots carries two transfers at once, never three", "[sim]") {
  // Four ranks whose three forward ways (and three backward) all cross one uplink (port 0 and
  // port 1), as a pipeline spread over two leaves does.
  const Schedule s = one_f_one_b(4, 8);
  auto config = uniform_config(4, 1, 0.01, 0.02, 1000000, link_at(8e6));
  config.record_trace = true;
  for (int r = 0; r + 1 < 4; ++r) {
    config.links[{r, r + 1}] = config.links[{r + 1, r}] = link_at(8e6);
    config.links[{r, r + 1}].ports = {0};
    config.links[{r + 1, r}].ports = {1};
  }
  const auto most_at_once = [](const SimResult& result, bool forward) {
    std::vector<std::pair<double, int>> edges;
    for (const TraceEvent& e : result.trace) {
      if (e.lane == Lane::kSend && (e.peer_rank > e.rank) == forward) {
        edges.emplace_back(e.start_s, 1);
        edges.emplace_back(e.end_s, -1);
      }
    }
    std::sort(edges.begin(), edges.end());
    int busy = 0;
    int most = 0;
    for (const auto& [t, step] : edges) {
      most = std::max(most, busy += step);
    }
    return most;
  };
  auto one = simulate(s, config);
  config.port_slots = {{0, 2}, {1, 2}};
  auto two = simulate(s, config);
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  CHECK(most_at_once(*one, true) == 1);
  CHECK(most_at_once(*two, true) == 2);
  CHECK(most_at_once(*two, false) <= 2);
  CHECK(two->makespan_s < one->makespan_s);
}

TEST_CASE("slow links make 1F1B slower than kFkB with k > 1", "[sim]") {
  // 16 MiB activations at 1 Gbit/s: 134 ms per transfer against 10 ms forwards.
  const double one = run(one_f_one_b(4, 16), 0.010, 0.020, 16u << 20, link_at(1e9)).throughput_mb_per_s;
  for (int k : {2, 4}) {
    INFO("k=" << k);
    CHECK(run(kfkb(4, 16, k), 0.010, 0.020, 16u << 20, link_at(1e9)).throughput_mb_per_s > 1.05 * one);
  }
}

TEST_CASE("the simulator names the blocked actions of a deadlock", "[sim]") {
  Schedule s = lower(one_f_one_b(2, 1));
  std::swap(s.ranks[0][1], s.ranks[0][2]);
  auto r = simulate(s, uniform_config(2, 1, 1, 1, 0, {}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kDeadlock);
  CHECK_THAT(r.error().message,
             Catch::Contains("rank 0 at action 1 (0RECV_B0)") && Catch::Contains("rank 1 at action 0 (1RECV_F0)"));
}

TEST_CASE("the simulator rejects costs that do not fit the schedule and links that stall", "[sim]") {
  auto wrong = simulate(one_f_one_b(4, 4), uniform_config(3, 1, 1, 1, 0, {}));
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message, Catch::Contains("costs for 3 stages, the schedule has 4"));
  LinkModel dies;
  dies.rate = *RateTrace::from_points({{0, 8e6}, {0.5, 0}});
  auto stalled = simulate(one_f_one_b(2, 1), uniform_config(2, 1, 0, 0, 1000000, dies));
  REQUIRE_FALSE(stalled.ok());
  CHECK_THAT(stalled.error().message, Catch::Contains("never arrives") && Catch::Contains("0->1"));
}

TEST_CASE("the simulator refuses a placement that does not fit the schedule, naming it", "[sim]") {
  Schedule short_list = one_f_one_b(4, 4);
  short_list.placement = {0, 1, 2};
  auto r = simulate(short_list, uniform_config(4, 1, 1, 1, 0, {}));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::Contains("a placement of 3 stages, the schedule has 4"));
  Schedule off = one_f_one_b(4, 4);
  off.placement = {0, 1, 2, 7};
  auto o = simulate(off, uniform_config(4, 1, 1, 1, 0, {}));
  REQUIRE_FALSE(o.ok());
  CHECK_THAT(o.error().message, Catch::Contains("stage 3 placed on rank 7, out of range"));
}

TEST_CASE("the Chrome trace has every action and an arrow per transfer", "[sim]") {
  const Schedule s = *make_schedule("kfkb:k=2", 3, 4);
  auto config = uniform_config(3, 1, 0.001, 0.002, 1 << 20, link_at(1e9, 1e-4));
  config.record_trace = true;
  auto r = simulate(s, config);
  REQUIRE(r.ok());
  const auto doc = nlohmann::json::parse(chrome_trace_json(*r));
  int complete = 0;
  int starts = 0;
  int finishes = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    complete += ph == "X";
    starts += ph == "s";
    finishes += ph == "f";
    if (ph == "X") {
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e["pid"].get<int>() < 3);
    }
  }
  CHECK(complete == static_cast<int>(r->actions));
  const int transfers = 2 * 2 * 4;  // two links each way, four micro-batches
  CHECK(starts == transfers);
  CHECK(finishes == transfers);
}

TEST_CASE("sim JSON carries the fields scripts rely on", "[sim]") {
  const SimResult r = run(one_f_one_b(2, 4), 1, 2);
  nlohmann::ordered_json inputs;
  inputs["stages"] = 2;
  const auto doc = sim_json(std::vector<SimResult>{r}, inputs);
  CHECK(doc["schema"] == "contend.sim/1");
  const auto& item = doc["results"][0];
  CHECK(item["schedule"] == "1f1b");
  CHECK(item["makespan_s"].get<double>() == Approx(15.0));
  CHECK(item["throughput_mb_per_s"].get<double>() == Approx(4 / 15.0));
  CHECK(item["bubble_fraction"].get<double>() == Approx(0.2));
  CHECK(item["peak_inflight"] == nlohmann::json::array({2, 1}));
  CHECK(item["peak_memory_bytes"].size() == 2);
}
