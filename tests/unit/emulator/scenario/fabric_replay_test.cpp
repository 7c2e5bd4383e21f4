// The timeline replayed at the flow level with closed-loop jobs: a job's flows take part only while
// they send, each iteration its compute and then its bytes at the shares of the moment, and what
// the other flows get follows the job's phases.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "contend/emulator/scenario/fabric_flows.h"
#include "scenario/fabric_state.h"

using namespace contend;
using namespace contend::emulator;

namespace {

// A leaf-spine of two leaves of four hosts at 200 Mbit/s, one 200 Mbit/s uplink each.
Scenario leaf_spine(const std::string& timeline, const std::string& duration = "20s") {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "f", "duration": ")" + duration +
                           R"(", "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 4, "spines": 1,
                           "host_rate": "200Mbit", "uplink_rate": "200Mbit"}}, "timeline": )" +
                           timeline + "}";
  auto s = parse_scenario(text, "f.json", nullptr);
  REQUIRE(s.ok());
  return *s;
}

// A job of one flow from h0 to h4 (across the uplink): 1 MiB after 100 ms of compute.
const std::string kJob =
    R"({"at": "0s", "flow": {"from": "h0", "to": "h4", "iterate": {"bytes": "1MiB", "compute": "100ms"}}})";

const double kPort = kFabricGoodput * 200e6;
const double kSend = 8.0 * (1 << 20) / kPort;  // the job's bytes alone on the uplink

const FabricPrediction& at(const PredictedRun& run, double t) {
  const FabricPrediction* last = &run.timeline.front();
  for (const FabricPrediction& p : run.timeline) {
    if (p.at_s <= t) {
      last = &p;
    }
  }
  return *last;
}

double rate_of(const FabricPrediction& p, const std::string& flow) {
  for (const PredictedFlow& f : p.flows) {
    if (f.name == flow) {
      return f.rate_bps;
    }
  }
  return 0;
}

}  // namespace

TEST_CASE("a closed-loop job alone: each iteration its compute, then its bytes at the path's rate",
          "[fabric][predict][jobs]") {
  const PredictedRun run = predict_run(leaf_spine("[" + kJob + "]"));
  REQUIRE(run.jobs.size() == 1);
  CHECK(run.jobs[0].job == "h0-h4");
  const double iteration = 0.1 + kSend;
  CHECK(run.jobs[0].iterations_s.size() == static_cast<std::size_t>(20 / iteration));
  for (double t : run.jobs[0].iterations_s) {
    CHECK(t == Approx(iteration));
  }
  // It sends only after its compute: in the third iteration's compute nothing runs, in its sending
  // the flow has the uplink.
  CHECK(at(run, 2 * iteration + 0.05).flows.empty());
  CHECK(rate_of(at(run, 2 * iteration + 0.1 + kSend / 2), "h0-h4") == Approx(kPort));
  // predict_flows takes the job as a stream: its share while it sends, at any time.
  CHECK(rate_of(predict_flows(leaf_spine("[" + kJob + "]"), 0.05), "h0-h4") == Approx(kPort));
}

TEST_CASE("a closed-loop job beside a stream: it sends at its share, and the stream gets the uplink while it computes",
          "[fabric][predict][jobs]") {
  const PredictedRun run =
      predict_run(leaf_spine("[" + kJob + R"(, {"at": "0s", "flow": {"from": "h1", "to": "h5"}}])"));
  REQUIRE(run.jobs.size() == 1);
  const double iteration = 0.1 + 2 * kSend;  // half the uplink while both send
  REQUIRE(run.jobs[0].iterations_s.size() > 50);
  for (double t : run.jobs[0].iterations_s) {
    CHECK(t == Approx(iteration));
  }
  CHECK(rate_of(at(run, iteration + 0.05), "h1-h5") == Approx(kPort));
  CHECK(rate_of(at(run, iteration + 0.1 + kSend), "h1-h5") == Approx(kPort / 2));
  CHECK(rate_of(at(run, iteration + 0.1 + kSend), "h0-h4") == Approx(kPort / 2));
  // The same flow open loop would hold half the uplink all the time.
  const FabricPrediction open =
      predict_flows(leaf_spine("[" + kJob + R"(, {"at": "0s", "flow": {"from": "h1", "to": "h5"}}])"), 0.05);
  CHECK(rate_of(open, "h1-h5") == Approx(kPort / 2));
}

TEST_CASE("a job's iterations end with its slowest flow, and a job whose flows stopped ends none after",
          "[fabric][predict][jobs]") {
  // A ring of two flows, h0 <-> h4; from 1 s h4's NIC runs at 50 Mbit/s, so h4 -> h0 is the slow
  // one (h0 -> h4 too: a link's rate holds both its ends); after 5 s the job's flows stop.
  const std::string ring = R"([{"at": "0s", "traffic": {"name": "dp", "pattern": "ring", "hosts": ["h0", "h4"],
                                 "duration": "5s", "iterate": {"bytes": "1MiB", "compute": "100ms"}}},
                               {"at": "1s", "link": "h4-leaf1", "rate": "50Mbit"}])";
  const PredictedRun run = predict_run(leaf_spine(ring));
  REQUIRE(run.jobs.size() == 1);
  CHECK(run.jobs[0].job == "dp");
  const std::vector<double>& its = run.jobs[0].iterations_s;
  REQUIRE(its.size() > 5);
  CHECK(its.front() == Approx(0.1 + kSend));
  CHECK(its.back() == Approx(0.1 + 8.0 * (1 << 20) / (kFabricGoodput * 50e6)));
  double ended = 0;
  for (double t : its) {
    ended += t;
  }
  CHECK(ended <= 5.0);
  CHECK(at(run, 10).flows.empty());
}

TEST_CASE("slotted jobs half a period apart interleave their sending, and slotted together they collide",
          "[fabric][predict][jobs]") {
  // Two jobs across the same uplink, each 1 MiB after 100 ms of compute, on a 200 ms period.
  const auto two = [](const std::string& second_at) {
    const std::string job = R"({"from": "%F", "to": "%T", "iterate": {"bytes": "1MiB", "compute": "100ms",
                               "period": "200ms"}})";
    std::string a = job, b = job;
    a.replace(a.find("%F"), 2, "h0").replace(a.find("%T"), 2, "h4");
    b.replace(b.find("%F"), 2, "h1").replace(b.find("%T"), 2, "h5");
    return predict_run(
        leaf_spine(R"([{"at": "0s", "flow": )" + a + R"(}, {"at": ")" + second_at + R"(", "flow": )" + b + "}]"));
  };
  // Apart: each sends for kSend (44 ms) in its own 100 ms window: every iteration one period.
  const PredictedRun apart = two("100ms");
  REQUIRE(apart.jobs.size() == 2);
  for (const PredictedJob& j : apart.jobs) {
    REQUIRE(j.iterations_s.size() > 50);
    for (std::size_t i = 1; i < j.iterations_s.size(); ++i) {
      CHECK(j.iterations_s[i] == Approx(0.2));
    }
  }
  // Together: both send at once, at half the uplink (88 ms); still within the period.
  const PredictedRun together = two("0s");
  CHECK(rate_of(at(together, 0.1 + kSend), "h0-h4") == Approx(kPort / 2));
  CHECK(rate_of(at(apart, 0.1 + kSend / 2), "h0-h4") == Approx(kPort));
}

namespace {

// A random timeline on a random small leaf-spine: closed-loop rings, open flows (some paced, some
// stopping), rate changes on hosts' and spines' links, a spine link down and up again.
std::string random_scenario(unsigned seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int leaves = pick(2, 3), per_leaf = pick(2, 3), spines = pick(1, 2), hosts = leaves * per_leaf;
  const auto host = [&] { return "\"h" + std::to_string(pick(0, hosts - 1)) + "\""; };
  const auto ms = [&](int lo, int hi) { return "\"" + std::to_string(pick(lo, hi)) + "ms\""; };
  std::string timeline;
  const auto add = [&](const std::string& at, const std::string& what) {
    timeline += std::string(timeline.empty() ? "" : ", ") + R"({"at": )" + at + ", " + what + "}";
  };
  for (int j = pick(1, 3); j > 0; --j) {
    std::vector<int> ring(static_cast<std::size_t>(hosts));
    std::iota(ring.begin(), ring.end(), 0);
    std::shuffle(ring.begin(), ring.end(), rng);
    std::string list;
    for (int k = pick(2, std::min(4, hosts)); k > 0; --k) {
      list +=
          std::string(list.empty() ? "" : ", ") + "\"h" + std::to_string(ring[static_cast<std::size_t>(k - 1)]) + "\"";
    }
    add(ms(0, 500), R"("traffic": {"name": "j)" + std::to_string(j) + R"(", "pattern": "ring", "hosts": [)" + list +
                        R"(], "streams": )" + std::to_string(pick(1, 2)) + R"(, "iterate": {"bytes": ")" +
                        std::to_string(pick(64, 1024)) + R"(KiB", "compute": )" + ms(10, 100) + "}}");
  }
  for (int f = pick(0, 3); f > 0; --f) {
    std::string from = host(), to = host();
    while (to == from) {
      to = host();
    }
    add(ms(0, 3000), R"("flow": {"name": "f)" + std::to_string(f) + R"(", "from": )" + from + R"(, "to": )" + to +
                         R"(, "streams": )" + std::to_string(pick(1, 3)) + R"(, "rate": ")" +
                         (pick(0, 1) == 0 ? "unlimited" : "30Mbit") + R"(", "duration": )" + ms(500, 4000) + "}");
  }
  for (int r = pick(0, 2); r > 0; --r) {
    const int h = pick(0, hosts - 1);
    const std::string link =
        pick(0, 1) == 0 ? "h" + std::to_string(h) + "-leaf" + std::to_string(h / per_leaf)
                        : "leaf" + std::to_string(pick(0, leaves - 1)) + "-spine" + std::to_string(pick(0, spines - 1));
    add(ms(0, 5000), R"("link": ")" + link + R"(", "rate": ")" + std::to_string(pick(20, 150)) + R"(Mbit")");
  }
  if (spines == 2) {
    const std::string link = "\"leaf" + std::to_string(pick(0, leaves - 1)) + "-spine1\"";
    add("\"2s\"", R"("link": )" + link + R"(, "state": "down")");
    add("\"4s\"", R"("link": )" + link + R"(, "state": "up")");
  }
  return R"({"schema": "contend.scenario/1", "name": "r", "duration": "6s", "fabric": {"leaf-spine": {"leaves": )" +
         std::to_string(leaves) + R"(, "hosts_per_leaf": )" + std::to_string(per_leaf) + R"(, "spines": )" +
         std::to_string(spines) + R"(, "host_rate": "100Mbit", "uplink_rate": ")" + std::to_string(pick(50, 200)) +
         R"(Mbit"}}, "timeline": [)" + timeline + "]}";
}

}  // namespace

namespace {

void check_same_run(const PredictedRun& a, const PredictedRun& b) {
  REQUIRE(a.jobs.size() == b.jobs.size());
  for (std::size_t j = 0; j < a.jobs.size(); ++j) {
    REQUIRE(a.jobs[j].iterations_s.size() == b.jobs[j].iterations_s.size());
    for (std::size_t i = 0; i < a.jobs[j].iterations_s.size(); ++i) {
      CHECK(a.jobs[j].iterations_s[i] == Approx(b.jobs[j].iterations_s[i]).epsilon(1e-9));
    }
  }
  REQUIRE(a.bits.size() == b.bits.size());
  for (const auto& [flow, bits] : b.bits) {
    CHECK(a.bits.at(flow) == Approx(bits).epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("a replay whose predictions start from the shares before equals one whose predictions share afresh",
          "[fabric][predict][jobs]") {
  long held = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    const std::string text = random_scenario(seed);
    INFO("seed " << seed << ": " << text);
    auto s = parse_scenario(text, "r.json", nullptr);
    REQUIRE(s.ok());
    emulator::detail::FabricCache resumed, with_timeline, afresh;
    afresh.resume = false;
    const PredictedRun reference = emulator::detail::replay(*s, {}, afresh);
    CHECK(afresh.sharing.held == 0);
    check_same_run(emulator::detail::replay(*s, {}, resumed), reference);
    // Kept whole, each prediction is read back by name (flows no path joins left out of it).
    check_same_run(emulator::detail::replay(*s, {true, {}}, with_timeline), reference);
    held += resumed.sharing.held;
  }
  CHECK(held > 1000);  // the shares before were held, not found afresh every time
}

TEST_CASE("a watched flow's rates are those of the whole timeline, and the first prediction is kept whole",
          "[fabric][predict][jobs]") {
  const Scenario s = leaf_spine("[" + kJob + R"(, {"at": "0s", "flow": {"name": "x", "from": "h1", "to": "h5"}},
                                   {"at": "3s", "link": "h5-leaf1", "rate": "50Mbit"},
                                   {"at": "0s", "flow": {"name": "y", "from": "h2", "to": "h6", "duration": "7s"}}])");
  const PredictedRun whole = predict_run(s);
  const PredictedRun watched = predict_watching(s, {"x", "y"});
  REQUIRE(watched.timeline.size() == 1);
  CHECK(watched.timeline[0].flows.size() == whole.timeline[0].flows.size());
  CHECK(watched.timeline[0].ports.size() == whole.timeline[0].ports.size());
  for (const std::string name : {"x", "y"}) {
    std::vector<std::pair<double, double>> expected;
    for (const FabricPrediction& p : whole.timeline) {
      const double bps = rate_of(p, name);
      if (expected.empty() || expected.back().second != bps) {
        expected.emplace_back(p.at_s, bps);
      }
    }
    INFO(name);
    REQUIRE(expected.size() > 2);
    CHECK(watched.rates.at(name) == expected);
  }
  CHECK(watched.rates.at("y").back().second == 0);  // stopped at 7 s
  CHECK(watched.jobs[0].iterations_s == whole.jobs[0].iterations_s);
}
