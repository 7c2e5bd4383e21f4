// Stalls (PipeMorph's stragglers): how scenarios make them, how a schedule of them answers, and
// that the transport and the simulator apply them to one link's messages, one after another.

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

#include "contend/common/stall_schedule.h"
#include "contend/emulator/scenario/pipemorph_trace.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/pipeline/transport/tcp_transport.h"
#include "contend/schedule/registry.h"
#include "contend/sim/simulator.h"

using namespace contend;
using namespace contend::emulator;

namespace {

// Rank `rank` of `world` TCP ranks on loopback, rank r listening at port base + r.
pipeline::TcpOptions on_loopback(int rank, int world, int base) {
  pipeline::TcpOptions o;
  o.rank = rank;
  o.world_size = world;
  for (int r = 0; r < world; ++r) {
    o.peers.push_back("127.0.0.1:" + std::to_string(base + r));
  }
  return o;
}

std::map<std::string, std::string> stall_files;

Result<Scenario> scenario(const std::string& timeline) {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "t", "duration": "60s",
    "nodes": ["n0", "n1", "n2"],
    "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "1Gbit"},
              {"name": "b", "from": "n1", "to": "n2", "rate": "1Gbit"}],
    "timeline": )" + timeline +
                           "}";
  return parse_scenario(text, "dir/t.json", [](const std::string& path) -> Result<std::string> {
    auto it = stall_files.find(path);
    return it == stall_files.end() ? Result<std::string>(make_error(Errc::kNotFound, path)) : it->second;
  });
}

// (time or iteration, stall) of every stall event on `link`.
std::vector<std::pair<double, double>> stalls(const std::vector<Event>& events, const std::string& link) {
  std::vector<std::pair<double, double>> out;
  for (const Event& e : events) {
    const auto* stall = std::get_if<SetStall>(&e.action);
    if (stall != nullptr && stall->link == link) {
      out.emplace_back(stall->at_iteration >= 0 ? stall->at_iteration : e.at_s, stall->stall_s);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a stall is a timeline event at a time, and every form a rate takes makes stalls too", "[stall]") {
  auto s = scenario(R"([{"at": "2s", "link": "a", "stall": "30ms"}, {"at": "5s", "link": "a", "stall": "0s"},
                        {"at": "0s", "link": "b", "periodic": {"period": "10s", "on": "2s", "stall": "60ms",
                         "until": "20s"}}])");
  REQUIRE(s.ok());
  CHECK(stalls(s->events, "a") == std::vector<std::pair<double, double>>{{2, 0.03}, {5, 0}});
  CHECK(stalls(s->events, "b") == std::vector<std::pair<double, double>>{{0, 0.06}, {2, 0}, {10, 0.06}, {12, 0}});
  CHECK(s->has_stalls());
  CHECK(s->flow_events() == 0);
  CHECK(s->iteration_events.empty());
}

TEST_CASE("a csv trace of stalls stalls the link at each point", "[stall]") {
  stall_files["dir/stalls.csv"] = "time_s,stall\n0,0\n1.5,30ms\n3,0.01\n";
  auto s = scenario(R"([{"at": "1s", "link": "b", "trace": {"file": "stalls.csv", "of": "stall"}}])");
  REQUIRE(s.ok());
  CHECK(stalls(s->events, "b") == std::vector<std::pair<double, double>>{{1, 0}, {2.5, 0.03}, {4, 0.01}});
}

TEST_CASE("PipeMorph's iteration-indexed trace is read as it is and applies from the iteration it names", "[stall]") {
  // The first lines of the artifact's experiments/large-scale/superpod/large-scale.trace, with the
  // links mapped onto this scenario's three nodes.
  stall_files["dir/slow.trace"] = "15;0_1;0.03\n85;0_1;0.00\n120;0_1,1_2;0.04\n190;0_1,1_2;0.00";
  auto s = scenario(R"([{"at": "0s", "trace": {"file": "slow.trace", "format": "pipemorph"}}])");
  REQUIRE(s.ok());
  CHECK(s->events.empty());  // no clock plays them
  CHECK(stalls(s->iteration_events, "a") ==
        std::vector<std::pair<double, double>>{{15, 0.03}, {85, 0}, {120, 0.04}, {190, 0}});
  CHECK(stalls(s->iteration_events, "b") == std::vector<std::pair<double, double>>{{120, 0.04}, {190, 0}});
  CHECK(s->has_stalls());
}

TEST_CASE("a stall that cannot be emulated is refused naming where and why", "[stall]") {
  const auto error_of = [](const std::string& timeline) {
    auto s = scenario(timeline);
    REQUIRE_FALSE(s.ok());
    return s.error().message;
  };
  CHECK_THAT(error_of(R"([{"at": "1s", "link": "a", "stall": "11s"}])"), Catch::Contains("/timeline/0"));
  CHECK_THAT(error_of(R"([{"at": "1s", "stall": "10ms"}])"), Catch::Contains("link"));
  stall_files["dir/crash.trace"] = "7;0_1;0.03\n1030;;inf\n";
  CHECK_THAT(error_of(R"([{"at": "0s", "trace": {"file": "crash.trace", "format": "pipemorph"}}])"),
             Catch::Contains("crash.trace:2: a NIC crash (inf)"));
  stall_files["dir/far.trace"] = "7;0_2;0.03\n";
  CHECK_THAT(error_of(R"([{"at": "0s", "trace": {"file": "far.trace", "format": "pipemorph"}}])"),
             Catch::Contains("names link 0_2, but no scenario link joins those nodes"));
  CHECK_THAT(error_of(R"([{"at": "0s", "link": "a", "trace": {"file": "far.trace", "format": "pipemorph"}}])"),
             Catch::Contains("names its links"));
}

TEST_CASE("a PipeMorph trace's lines are checked: order, links, delays", "[stall]") {
  CHECK(parse_pipemorph_trace("7;2_3;0.03", "t").ok());
  CHECK_THAT(parse_pipemorph_trace("9;0_1;0.03\n8;0_1;0", "t").error().message, Catch::Contains("t:2: iterations"));
  CHECK_THAT(parse_pipemorph_trace("9;0-1;0.03", "t").error().message, Catch::Contains("stage pairs i_j"));
  CHECK_THAT(parse_pipemorph_trace("9;0_1;fast", "t").error().message, Catch::Contains("delay in seconds"));
  CHECK_THAT(parse_pipemorph_trace("9;0_1", "t").error().message, Catch::Contains("three fields"));
  CHECK_THAT(parse_pipemorph_trace("# nothing\n", "t").error().message, Catch::Contains("no ITERATION"));
}

TEST_CASE("a stall schedule answers with the larger of its timed and its iteration-indexed stall", "[stall]") {
  StallSchedule s;
  CHECK(s.empty());
  CHECK(s.at(100, 100) == 0);
  s.add_at_time(2, 0.03);
  s.add_at_time(5, 0);
  s.add_at_iteration(10, 0.01);
  s.add_at_iteration(20, 0.05);
  CHECK_FALSE(s.empty());
  CHECK(s.at(1, 0) == 0);
  CHECK(s.at(2, 0) == 0.03);
  CHECK(s.at(3, 15) == 0.03);
  CHECK(s.at(6, 15) == 0.01);
  CHECK(s.at(6, 25) == 0.05);
  CHECK(s.at(3, 25) == 0.05);
}

TEST_CASE("the TCP transport stalls one link's messages one after another, both ways, and no other link's",
          "[stall][transport]") {
  constexpr int kBase = 29870;
  constexpr int kCount = 8;
  constexpr double kStall = 0.04;
  std::vector<double> took(3, 0);  // rank 0 -> 1, 1 -> 0, 1 -> 2: first send to last arrival
  std::vector<std::string> errors(3);
  // When rank 0 starts sending: rank 1 may finish connecting later, so its own clock would miss
  // some of the stalls rank 0's messages have already waited.
  std::atomic<double> rank0_sends{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      auto t = pipeline::connect_tcp(on_loopback(r, 3, kBase));
      if (!t) {
        errors[r] = t.error().message;
        return;
      }
      pipeline::SendOptions stall;
      stall.stall_s = [](int peer, const pipeline::Tag&) { return peer <= 1 ? kStall : 0.0; };  // link 0-1 only
      if (r == 2) {
        stall.stall_s = [](int, const pipeline::Tag&) { return 0.0; };
      } else if (r == 1) {
        stall.stall_s = [](int peer, const pipeline::Tag&) { return peer == 0 ? kStall : 0.0; };
      }
      REQUIRE((*t)->set_send_options(stall).ok());
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      const auto start = std::chrono::steady_clock::now();
      const auto since = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      const auto send_all = [&](int peer, pipeline::Kind kind) {
        for (int i = 0; i < kCount; ++i) {
          REQUIRE((*t)->send(peer, pipeline::Tag{kind, 0, i, 0}, std::vector<float>(16 * 1024, 1.0f)).ok());
        }
      };
      const auto receive_all = [&](int peer, pipeline::Kind kind) {
        for (int i = 0; i < kCount; ++i) {
          REQUIRE((*t)->recv(peer, pipeline::Tag{kind, 0, i, 0}, deadline).ok());
        }
      };
      if (r == 0) {
        rank0_sends = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
        send_all(1, pipeline::Kind::kActivation);
        receive_all(1, pipeline::Kind::kGradient);
      } else if (r == 1) {
        send_all(0, pipeline::Kind::kGradient);
        send_all(2, pipeline::Kind::kActivation);
        receive_all(0, pipeline::Kind::kActivation);
        took[0] = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() -
                  rank0_sends.load();
        REQUIRE((*t)->flush().ok());
      } else {
        receive_all(1, pipeline::Kind::kActivation);
        took[2] = since();
      }
      if (r == 0) {
        took[1] = since();
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  REQUIRE(errors == std::vector<std::string>(3));
  // Each stalled message waits its own stall: kCount of them take at least kCount stalls.
  CHECK(took[0] >= kCount * kStall * 0.99);
  CHECK(took[1] >= kCount * kStall * 0.99);
  // The unstalled link 1 -> 2 is not held (its tensors queue behind none of link 0-1's).
  CHECK(took[2] < 0.5 * kCount * kStall);
}

TEST_CASE("the simulator stalls one link's transfers one after another, and blocking sends hold the compute",
          "[stall][sim]") {
  const auto lowered = [](const char* spec, int p, int m) {
    return schedule::lower(schedule::make_schedule(spec, p, m).value());
  };
  // Three stages, 8 micro-batches, 1 ms forwards and 2 ms backwards, links unlimited.
  sim::SimConfig c = sim::uniform_config(3, 1, 0.001, 0.002, 1 << 20, sim::LinkModel{});
  c.record_trace = true;
  const double quiet = sim::simulate(lowered("gpipe", 3, 8), c).value().makespan_s;
  sim::LinkModel stalled;
  stalled.stall_s = RateTrace::constant(0.01);
  c.links[{1, 2}] = stalled;
  c.links[{2, 1}] = stalled;
  auto r = sim::simulate(lowered("gpipe", 3, 8), c);
  REQUIRE(r.ok());
  // Link 1-2 carries 8 activations and 8 gradients, each after a 10 ms stall, one after another.
  CHECK(r->makespan_s >= quiet + 8 * 0.01);
  std::vector<double> arrivals_12, arrivals_01;
  for (const sim::TraceEvent& e : r->trace) {
    if (e.lane == sim::Lane::kSend && e.action.op == schedule::Op::kSendF) {
      (e.rank == 1 ? arrivals_12 : arrivals_01).push_back(e.end_s);
    }
  }
  REQUIRE(arrivals_12.size() == 8);
  for (std::size_t i = 1; i < arrivals_12.size(); ++i) {
    CHECK(arrivals_12[i] - arrivals_12[i - 1] >= 0.01 - 1e-12);
  }
  // Link 0-1 is not stalled: its activations arrive as rank 0 makes them, 1 ms apart.
  REQUIRE(arrivals_01.size() == 8);
  CHECK(arrivals_01.back() < 0.0085);
  // 1F1B with the stall: a blocking send holds rank 1's lane until its tensor is on the wire,
  // stall included; an asynchronous one lets the next compute start at once.
  const auto next_compute_waits = [&](bool blocking) {
    c.blocking_sends = blocking;
    auto run = sim::simulate(lowered("1f1b", 3, 8), c);
    REQUIRE(run.ok());
    int waited = 0;
    int sends = 0;
    const sim::TraceEvent* send = nullptr;
    for (const sim::TraceEvent& e : run->trace) {
      if (e.rank != 1) {
        continue;
      }
      if (e.lane == sim::Lane::kSend && e.action.op == schedule::Op::kSendF) {
        send = &e;
      } else if (e.lane == sim::Lane::kCompute && send != nullptr) {
        ++sends;
        waited += e.start_s >= send->start_s ? 1 : 0;
        send = nullptr;
      }
    }
    REQUIRE(sends > 0);
    return waited == sends;
  };
  CHECK(next_compute_waits(true));
  CHECK_FALSE(next_compute_waits(false));
}

TEST_CASE("with delegates, that many tensors to one peer wait out their stalls at once", "[stall][transport]") {
  constexpr int kBase = 29890;
  constexpr int kCount = 12;
  constexpr double kStall = 0.05;
  for (const int delegates : {1, 4}) {
    std::string error;
    double took = 0;
    std::thread peer([&] {
      auto t = pipeline::connect_tcp(on_loopback(1, 2, kBase));
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; t && i < kCount; ++i) {
        if (!(*t)->recv(0, pipeline::Tag{pipeline::Kind::kActivation, 0, i, 0}, start + std::chrono::seconds(30))) {
          error = "rank 1 did not receive";
          return;
        }
      }
      took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
    auto t = pipeline::connect_tcp(on_loopback(0, 2, kBase));
    REQUIRE(t.ok());
    pipeline::SendOptions options;
    options.delegates = delegates;
    options.stall_s = [](int, const pipeline::Tag&) { return kStall; };
    REQUIRE((*t)->set_send_options(options).ok());
    for (int i = 0; i < kCount; ++i) {
      REQUIRE((*t)->send(1, pipeline::Tag{pipeline::Kind::kActivation, 0, i, 0}, std::vector<float>(1024, 1.0f)).ok());
    }
    REQUIRE((*t)->flush().ok());
    peer.join();
    REQUIRE(error.empty());
    INFO(delegates << " delegates: " << kCount << " tensors took " << took << " s");
    // kCount / delegates rounds of one stall each: never fewer; with several delegates the stalls
    // overlap, well under the kCount one after another that one delegate waits (a loaded machine
    // may add a round or two, not six).
    const double rounds = static_cast<double>(kCount) / delegates;
    CHECK(took >= rounds * kStall * 0.95);
    if (delegates > 1) {
      CHECK(took < 0.5 * kCount * kStall);
    }
  }
}

TEST_CASE("the simulator's stall slots let that many transfers wait out their stalls at once", "[stall][sim]") {
  const schedule::Schedule gpipe = schedule::lower(schedule::make_schedule("gpipe", 3, 8).value());
  sim::SimConfig c = sim::uniform_config(3, 1, 0.001, 0.002, 1 << 20, sim::LinkModel{});
  const double quiet = sim::simulate(gpipe, c).value().makespan_s;
  const auto slowed_with = [&](int slots) {
    sim::LinkModel stalled;
    stalled.stall_s = RateTrace::constant(0.01);
    stalled.stall_slots = slots;
    c.links[{1, 2}] = stalled;
    c.links[{2, 1}] = stalled;
    return sim::simulate(gpipe, c).value().makespan_s - quiet;
  };
  // One slot: 8 stalls one after another each way; four: two rounds of them each way at most.
  const double one = slowed_with(1);
  const double four = slowed_with(4);
  CHECK(one >= 8 * 0.01);
  CHECK(four <= 2 * 2 * 0.01 + 1e-9);
  CHECK(four >= 0.01);
}

TEST_CASE("a stall after a TCP send may overlap its tensor's way over the wire, after NCCL's it may not",
          "[stall][sim]") {
  // 1 MiB tensors on a 1 Gbit/s link: 8.4 ms each on the wire, behind a 5 ms stall; rank 1 makes
  // them 1 ms apart, so the link is always busy.
  const schedule::Schedule gpipe = schedule::lower(schedule::make_schedule("gpipe", 3, 8).value());
  sim::SimConfig c = sim::uniform_config(3, 1, 0.001, 0.002, 1 << 20, sim::LinkModel{});
  c.record_trace = true;
  const auto gaps_with = [&](bool overlaps) {
    sim::LinkModel stalled;
    stalled.rate = RateTrace::constant(1e9);
    stalled.stall_s = RateTrace::constant(0.005);
    stalled.stall_overlaps_wire = overlaps;
    c.links[{1, 2}] = stalled;
    c.links[{2, 1}] = stalled;
    auto run = sim::simulate(gpipe, c);
    REQUIRE(run.ok());
    std::vector<double> arrivals;
    for (const sim::TraceEvent& e : run->trace) {
      if (e.lane == sim::Lane::kSend && e.action.op == schedule::Op::kSendF && e.rank == 1) {
        arrivals.push_back(e.end_s);
      }
    }
    REQUIRE(arrivals.size() == 8);
    return (arrivals.back() - arrivals.front()) / 7;
  };
  const double wire = 8.0 * (1 << 20) / 1e9;
  // TCP: the next stall runs while the tensor before is on the wire, which then sets the pace.
  CHECK(gaps_with(true) == Approx(wire).epsilon(0.01));
  // NCCL: each stall waits for the tensor before to have left: stall and wire one after another.
  CHECK(gaps_with(false) == Approx(wire + 0.005).epsilon(0.01));
}

TEST_CASE("a waiting send returns once its tensor is out, its stall included, an asynchronous one at once",
          "[stall][transport]") {
  constexpr int kBase = 29880;
  constexpr double kStall = 0.05;
  for (const bool wait : {true, false}) {
    double send_took = 0;
    std::string error;
    std::thread peer([&] {
      auto t = pipeline::connect_tcp(on_loopback(1, 2, kBase));
      if (!t || !(*t)->recv(0, pipeline::Tag{}, std::chrono::steady_clock::now() + std::chrono::seconds(30))) {
        error = "rank 1 did not receive";
      }
    });
    auto t = pipeline::connect_tcp(on_loopback(0, 2, kBase));
    REQUIRE(t.ok());
    pipeline::SendOptions options;
    options.wait = wait;
    options.stall_s = [](int, const pipeline::Tag&) { return kStall; };
    REQUIRE((*t)->set_send_options(options).ok());
    const auto start = std::chrono::steady_clock::now();
    REQUIRE((*t)->send(1, pipeline::Tag{}, std::vector<float>(1024, 1.0f)).ok());
    send_took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE((*t)->flush().ok());
    peer.join();
    CHECK(error.empty());
    INFO("sends=" << (wait ? "wait" : "async") << ": the send took " << send_took << " s");
    if (wait) {
      CHECK(send_took >= kStall * 0.99);
    } else {
      CHECK(send_took < kStall);
    }
  }
}
