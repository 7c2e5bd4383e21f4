#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "contend/emulator/player.h"

using namespace contend;
using namespace contend::emulator;

namespace {
class FakeNetwork : public LinkControl {
 public:
  std::vector<std::pair<std::string, double>> applied;
  std::vector<std::pair<std::string, bool>> states;
  int samples = 0;
  Result<void> set_rate(const std::string& link, double rate_bps) override {
    applied.emplace_back(link, rate_bps);
    return {};
  }
  Result<void> set_link_state(const std::string& link, bool up) override {
    states.emplace_back(link, up);
    return {};
  }
  Result<std::vector<LinkSample>> sample() override {
    ++samples;
    ClassStats s;
    s.name = "workload";
    s.bytes = 1000u * static_cast<unsigned>(samples);
    return std::vector<LinkSample>{{"a", "n0", s}};
  }
};

Scenario scenario(double duration_s) {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "p", "duration": ")" +
                           std::to_string(duration_s) + R"(s", "nodes": ["n0", "n1"],
    "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "1Gbit"}],
    "timeline": [{"at": "100ms", "link": "a", "rate": "10Mbit"}, {"at": "200ms", "link": "a", "rate": "20Mbit"},
                 {"at": "250ms", "flow": {"from": "n0", "to": "n1", "duration": "10ms"}}]})";
  return *parse_scenario(text, "p.json", nullptr);
}

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    out.push_back(nlohmann::json::parse(line));
  }
  return out;
}
}  // namespace

TEST_CASE("a link taken down and up by the timeline is applied in order and logged with its state", "[player]") {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "p", "duration": "0.3s", "nodes": ["n0", "n1"],
    "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "1Gbit"}],
    "timeline": [{"at": "50ms", "link": "a", "state": "down"}, {"at": "150ms", "link": "*", "state": "up"}]})";
  auto s = parse_scenario(text, "p.json", nullptr);
  REQUIRE(s.ok());
  const std::string path = "/tmp/contend-player-state-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  FakeNetwork net;
  std::atomic<bool> stop{false};
  {
    auto log = EventLog::open(path);
    REQUIRE(log.ok());
    auto report = play(*s, net, *log, stop, PlayerOptions{std::chrono::milliseconds(0), true});
    REQUIRE(report.ok());
    CHECK(report->applied == 2);
  }
  CHECK(net.states == std::vector<std::pair<std::string, bool>>{{"a", false}, {"a", true}});
  std::vector<std::string> logged;
  for (const auto& l : read_lines(path)) {
    if (l["kind"] == "link_state") {
      logged.push_back(l["state"].get<std::string>());
      CHECK(l["applied_s"].get<double>() >= l["scheduled_s"].get<double>());
    }
  }
  CHECK(logged == std::vector<std::string>{"down", "up"});
  std::remove(path.c_str());
  CHECK_THAT(parse_scenario(R"({"schema": "contend.scenario/1", "name": "p", "duration": "1s", "nodes": ["n0", "n1"],
    "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "1Gbit"}],
    "timeline": [{"at": "50ms", "link": "a", "state": "off"}]})",
                            "p.json", nullptr)
                 .error()
                 .message,
             Catch::Contains("/timeline/0/state: expected \"up\" or \"down\", got \"off\""));
}

TEST_CASE("the player applies events in order at their times and logs scheduled and applied times", "[player]") {
  const std::string path = "/tmp/contend-player-test-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  FakeNetwork net;
  std::atomic<bool> stop{false};
  {
    auto log = EventLog::open(path);
    REQUIRE(log.ok());
    auto report = play(scenario(0.4), net, *log, stop, PlayerOptions{std::chrono::milliseconds(50), true});
    REQUIRE(report.ok());
    CHECK(report->applied == 2);
    CHECK(report->skipped_flows == 2);
    CHECK_FALSE(report->stopped);
    CHECK(report->max_lateness_s < 0.050);  // generous: a shared CI machine; the bench measures it
  }
  const std::vector<std::pair<std::string, double>> expected = {{"a", 10e6}, {"a", 20e6}};
  CHECK(net.applied == expected);
  CHECK(net.samples >= 6);  // every 50 ms of 400 ms
  const auto lines = read_lines(path);
  REQUIRE(lines.size() > 4);
  int rates = 0;
  for (const auto& l : lines) {
    CHECK(l["schema"] == "contend.events/1");
    if (l["kind"] == "rate") {
      ++rates;
      CHECK(l["applied_s"].get<double>() >= l["scheduled_s"].get<double>());
    }
    if (l["kind"] == "flow_start") {
      CHECK(l["status"] == "skipped");
      CHECK_THAT(l["reason"].get<std::string>(), Catch::Contains("flow generator"));
    }
  }
  CHECK(rates == 2);
  CHECK(lines.front()["kind"] == "start");
  CHECK(lines.back()["kind"] == "end");
  std::remove(path.c_str());
}

TEST_CASE("the player stops early when asked and says so", "[player]") {
  FakeNetwork net;
  std::atomic<bool> stop{false};
  const std::string path = "/tmp/contend-player-stop-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  auto log = EventLog::open(path);
  std::remove(path.c_str());  // the open file is all it needs
  REQUIRE(log.ok());
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  auto report = play(scenario(30), net, *log, stop, PlayerOptions{std::chrono::milliseconds(0), true});
  stopper.join();
  REQUIRE(report.ok());
  CHECK(report->stopped);
  CHECK(report->applied == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("a play without links logs its flow events and ends with a count of them", "[player]") {
  const std::string path = "/tmp/contend-player-nolinks-" + std::to_string(::getpid()) + ".jsonl";
  Scenario s = scenario(0.3);
  s.events.erase(std::remove_if(s.events.begin(), s.events.end(),
                                [](const Event& e) { return std::holds_alternative<SetRate>(e.action); }),
                 s.events.end());
  NoLinks links;
  std::atomic<bool> stop{false};
  {
    auto log = EventLog::open(path);
    REQUIRE(log.ok());
    auto report = play(s, links, *log, stop, PlayerOptions{std::chrono::milliseconds(50), true});
    REQUIRE(report.ok());
    CHECK(report->applied == 0);
    CHECK(report->skipped_flows == 2);
  }
  const auto lines = read_lines(path);
  REQUIRE(lines.size() >= 4);
  for (const auto& l : lines) {
    CHECK(l["kind"] != "sample");  // no links, nothing sampled
  }
  CHECK(lines.back()["kind"] == "end");
  CHECK(lines.back()["flow_events"] == 0);
  CHECK(lines.back()["skipped_flows"] == 2);
  CHECK_FALSE(links.set_rate("a", 1e6).ok());
  std::remove(path.c_str());
}

TEST_CASE("an exception during a play comes back as the play's error and stops its flows", "[player]") {
  class ThrowingNetwork : public LinkControl {
   public:
    Result<void> set_rate(const std::string& /*link*/, double /*rate_bps*/) override { throw std::bad_alloc(); }
    Result<std::vector<LinkSample>> sample() override { return std::vector<LinkSample>{}; }
    Result<void> set_link_state(const std::string& /*link*/, bool /*up*/) override { return {}; }
  } net;
  std::atomic<bool> stop{false};
  const std::string path = "/tmp/contend-player-throws-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  auto log = EventLog::open(path);
  REQUIRE(log.ok());
  auto report = play(scenario(0.3), net, *log, stop, PlayerOptions{std::chrono::milliseconds(0), true});
  std::remove(path.c_str());
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.error().message, Catch::Contains("the scenario player") && Catch::Contains("bad_alloc"));
}

TEST_CASE("an event log is created exclusively: an existing file or a link is never written", "[player]") {
  const std::string path = "/tmp/contend-player-exclusive-" + std::to_string(::getpid()) + ".jsonl";
  const std::string target = path + ".target";
  std::remove(path.c_str());
  std::remove(target.c_str());
  {
    std::ofstream(path) << "kept\n";
    auto log = EventLog::open(path);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.error().message, Catch::Contains("event log " + path + " exists already (a file)"));
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    CHECK(line == "kept");
  }
  std::remove(path.c_str());
  REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
  auto linked = EventLog::open(path);
  REQUIRE_FALSE(linked.ok());
  CHECK_THAT(linked.error().message, Catch::Contains("exists already (a link)"));
  CHECK_FALSE(std::ifstream(target).good());  // not created through the link
  std::remove(path.c_str());
  CHECK(EventLog::open("-").ok());
}

namespace {
// A network whose shaping can be changed behind the player's back: its one class shapes at the
// rate last set, unless `removed` or `tampered` after `after` samples, or `halved` (a rate set to
// half of what was asked, as a kernel that clamped it).
class TamperedNetwork : public LinkControl {
 public:
  enum class What { kNothing, kRemoved, kTampered, kHalved, kReshaped } what = What::kNothing;
  int after = 2;
  std::chrono::milliseconds set_takes{0};
  Result<void> set_link_state(const std::string&, bool up) override {
    up_ = up;  // what the interface's setup shows (ClassStats::setup)
    return {};
  }
  Result<void> set_rate(const std::string&, double rate_bps) override {
    std::this_thread::sleep_for(set_takes);
    rate_ = what == What::kHalved ? rate_bps / 2 : rate_bps;
    return {};
  }
  Result<std::vector<LinkSample>> sample() override {
    if (++samples_ > after && what == What::kRemoved) {
      return std::vector<LinkSample>{};
    }
    ClassStats s;
    s.name = "link";
    s.link_level = true;
    s.rate_bps = samples_ > after && what == What::kTampered ? 2 * rate_ : rate_;
    // A burst raised, a filter added or the interface taken down behind the player's back.
    s.setup = (up_ ? 1 : 2) + (samples_ > after && what == What::kReshaped ? 10 : 0);
    return std::vector<LinkSample>{{"a", "n0", s}};
  }

 private:
  bool up_ = true;
  double rate_ = 1e9;
  int samples_ = 0;
};

Result<PlayReport> play_on(TamperedNetwork& net, const std::string& name, const Scenario& s = scenario(0.4)) {
  const std::string path = "/tmp/contend-player-" + name + "-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  auto log = EventLog::open(path);
  std::remove(path.c_str());
  REQUIRE(log.ok());
  std::atomic<bool> stop{false};
  return play(s, net, *log, stop, PlayerOptions{std::chrono::milliseconds(20), true});
}
}  // namespace

TEST_CASE("a play fails once the shaping it installed is gone or changed behind its back", "[player]") {
  TamperedNetwork calm;  // its rates change only as the player sets them (at 100 and 200 ms)
  CHECK(play_on(calm, "calm").ok());
  TamperedNetwork removed;
  removed.what = TamperedNetwork::What::kRemoved;
  auto r = play_on(removed, "removed");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::Contains("link a: its shaping on node n0 (class link) is gone at"));
  TamperedNetwork tampered;
  tampered.what = TamperedNetwork::What::kTampered;
  auto t = play_on(tampered, "tampered");
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.error().message, Catch::Contains("shapes at 2Gbit") && Catch::Contains("not the 1Gbit contend set"));
  TamperedNetwork halved;
  halved.what = TamperedNetwork::What::kHalved;
  auto h = play_on(halved, "halved");
  REQUIRE_FALSE(h.ok());
  CHECK_THAT(h.error().message,
             Catch::Contains("link a: class link on node n0 shapes at") && Catch::Contains("the scenario set"));
  TamperedNetwork reshaped;
  reshaped.what = TamperedNetwork::What::kReshaped;
  auto e = play_on(reshaped, "reshaped");
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(e.error().message, Catch::Contains("link a: the shaping of class link on node n0 changed at"));
  // The player's own link states change the setup too: not a fault.
  auto downed = parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "p", "duration": "0.3s", "nodes": ["n0", "n1"],
          "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "1Gbit"}],
          "timeline": [{"at": "100ms", "link": "a", "state": "down"}, {"at": "200ms", "link": "a", "state": "up"}]})",
      "p.json", nullptr);
  REQUIRE(downed.ok());
  TamperedNetwork calm_states;
  CHECK(play_on(calm_states, "states", *downed).ok());
}

TEST_CASE("an event applied later than the play allows fails it: the network was not the scenario's", "[player]") {
  TamperedNetwork slow;
  slow.set_takes = kMaxEventLateness + std::chrono::milliseconds(50);
  auto r = play_on(slow, "late");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::Contains("event at 100ms") && Catch::Contains("late, more than the 500ms"));
}

TEST_CASE("sampling slows to a tenth of a CPU when a round of samples is slow, and says so", "[player]") {
  struct SlowNetwork : FakeNetwork {
    Result<std::vector<LinkSample>> sample() override {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return FakeNetwork::sample();
    }
  } net;
  const std::string path = "/tmp/contend-player-pace-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  std::atomic<bool> stop{false};
  {
    auto log = EventLog::open(path);
    REQUIRE(log.ok());
    REQUIRE(play(scenario(1.0), net, *log, stop, PlayerOptions{std::chrono::milliseconds(50), true}).ok());
  }
  // Rounds of 20 ms or more: every 200 ms or more, not every 50 (20 rounds would take 0.4 of the
  // play).
  CHECK(net.samples <= 6);
  std::vector<double> periods;
  for (const auto& l : read_lines(path)) {
    if (l["kind"] == "sample_period") {
      periods.push_back(l["period_s"].get<double>());
      CHECK(l["round_s"].get<double>() >= 0.020);
    }
  }
  REQUIRE_FALSE(periods.empty());
  CHECK(periods.front() >= 0.2);
  std::remove(path.c_str());
}

TEST_CASE("a scenario of many links logs its samples compact, as a fabric's", "[player]") {
  std::string nodes = R"("n0")";
  std::string links;
  for (int i = 1; i <= 33; ++i) {
    nodes += ", \"n" + std::to_string(i) + "\"";
    links += std::string(i > 1 ? ", " : "") + R"({"name": "l)" + std::to_string(i) + R"(", "from": "n)" +
             std::to_string(i - 1) + R"(", "to": "n)" + std::to_string(i) + R"(", "rate": "1Gbit"})";
  }
  const auto many = parse_scenario(R"({"schema": "contend.scenario/1", "name": "p", "duration": "0.2s", "nodes": [)" +
                                       nodes + R"(], "links": [)" + links + "]}",
                                   "p.json", nullptr);
  REQUIRE(many.ok());
  const std::string path = "/tmp/contend-player-many-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  FakeNetwork net;
  std::atomic<bool> stop{false};
  {
    auto log = EventLog::open(path);
    REQUIRE(log.ok());
    REQUIRE(play(*many, net, *log, stop, PlayerOptions{std::chrono::milliseconds(50), true}).ok());
  }
  int index = 0;
  int ports = 0;
  for (const auto& l : read_lines(path)) {
    CHECK(l["kind"] != "sample");
    index += l["kind"] == "port_index" ? 1 : 0;
    ports += l["kind"] == "ports" ? 1 : 0;
  }
  CHECK(index == 1);
  CHECK(ports == net.samples);
  std::remove(path.c_str());
}
