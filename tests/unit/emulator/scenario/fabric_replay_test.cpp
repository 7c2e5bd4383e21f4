// The timeline replayed at the flow level with closed-loop jobs: a job's flows take part only while
// they send, each iteration its compute and then its bytes at the shares of the moment, and what
// the other flows get follows the job's phases.
#include <catch2/catch.hpp>

#include "contend/emulator/scenario/fabric_flows.h"

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
