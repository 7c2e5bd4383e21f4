#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "contend/emulator/event_record.h"
#include "contend/emulator/scenario/scenario.h"

using namespace contend;
using namespace contend::emulator;

namespace {
std::map<std::string, std::string> files;

// A scenario of two links, link "a" with `links_extra` added (its own rate in place of 1 Gbit/s
// when it gives one: a key twice is an error).
Result<Scenario> parse_two_links(const std::string& timeline, const std::string& links_extra = "") {
  const std::string rate = links_extra.find("\"rate\":") == std::string::npos ? R"(, "rate": "1Gbit")" : "";
  const std::string text = R"({"schema": "contend.scenario/1", "name": "t", "duration": "60s", "seed": 5,
    "nodes": ["n0", "n1", "n2"],
    "links": [{"name": "a", "from": "n0", "to": "n1")" +
                           rate + links_extra + R"(},
              {"name": "b", "from": "n1", "to": "n2", "rate": "500Mbit"}],
    "timeline": )" + timeline +
                           "}";
  return parse_scenario(text, "dir/t.json", [](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) {
      return make_error(Errc::kNotFound, "open(" + path + "): No such file or directory");
    }
    return it->second;
  });
}

std::string two_links_error(const std::string& timeline, const std::string& links_extra = "") {
  auto s = parse_two_links(timeline, links_extra);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == Errc::kParse);
  return s.error().message;
}

std::vector<std::pair<double, double>> rates(const Scenario& s, const std::string& link) {
  std::vector<std::pair<double, double>> out;
  for (const Event& e : s.events) {
    const auto* rate = std::get_if<SetRate>(&e.action);
    if (rate != nullptr && rate->link == link) {
      out.emplace_back(e.at_s, rate->rate_bps);
    }
  }
  return out;
}
}  // namespace

TEST_CASE("the minimal scenario of docs/scenario-format.md parses", "[scenario]") {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "two-nodes", "duration": "10s",
    "nodes": ["n0", "n1"], "links": [{"name": "n0-n1", "from": "n0", "to": "n1", "rate": "200Mbit"}],
    "timeline": [{"at": "2s", "link": "n0-n1", "rate": "50Mbit"}]})";
  auto s = parse_scenario(text, "two.json", nullptr);
  REQUIRE(s.ok());
  CHECK(s->duration_s == 10);
  REQUIRE(s->links.size() == 1);
  CHECK(s->links[0].rate_bps == 200e6);
  CHECK(s->links[0].direction == Direction::kBoth);
  CHECK(s->links[0].preemption == Preemption::kBackgroundFirst);
  REQUIRE(s->events.size() == 1);
  CHECK(s->events[0].at_s == 2);
  CHECK(std::get<SetRate>(s->events[0].action).rate_bps == 50e6);
  CHECK(s->events[0].origin == "/timeline/0");
  CHECK_FALSE(s->needs_netem());
}

TEST_CASE("rate changes on \"*\" apply to every link and events are sorted by time", "[scenario]") {
  auto s =
      parse_two_links(R"([{"at": "5s", "link": "*", "rate": "100Mbit"}, {"at": "1s", "link": "b", "rate": "1Gbit"}])");
  REQUIRE(s.ok());
  REQUIRE(s->events.size() == 3);
  CHECK(s->events[0].at_s == 1);
  CHECK(std::get<SetRate>(s->events[1].action).link == "a");
  CHECK(std::get<SetRate>(s->events[2].action).link == "b");
  CHECK(s->events[2].at_s == 5);
}

TEST_CASE("periodic preemption alternates the cap and the base rate until the end", "[scenario]") {
  auto s = parse_two_links(
      R"([{"at": "2s", "link": "a", "periodic": {"period": "10s", "on": "4s", "rate": "100Mbit", "until": "30s"}}])");
  REQUIRE(s.ok());
  const std::vector<std::pair<double, double>> expected = {{2, 100e6}, {6, 1e9},    {12, 100e6},
                                                           {16, 1e9},  {22, 100e6}, {26, 1e9}};
  CHECK(rates(*s, "a") == expected);
}

TEST_CASE("random preemption is reproducible from its seed and episodes never overlap", "[scenario]") {
  const std::string t =
      R"([{"at": "0s", "link": "a", "random": {"mean_gap": "3s", "duration": "1s", "rate": "100Mbit", "seed": SEED}}])";
  const auto with_seed = [&](const char* seed) {
    std::string text = t;
    text.replace(text.find("SEED"), 4, seed);
    auto s = parse_two_links(text);
    REQUIRE(s.ok());
    return rates(*s, "a");
  };
  const auto first = with_seed("11");
  CHECK(first == with_seed("11"));
  CHECK(first != with_seed("12"));
  REQUIRE(first.size() >= 8);  // about 60 s / 4 s episodes
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].second == (i % 2 == 0 ? 100e6 : 1e9));  // on, off, on, off...
    CHECK(first[i].first < 60.0);
    if (i > 0) {
      CHECK(first[i].first >= first[i - 1].first);
    }
  }
}

TEST_CASE("a ramp moves in equal steps from the base rate to its target", "[scenario]") {
  auto s = parse_two_links(R"([{"at": "10s", "link": "b", "ramp": {"to": "100Mbit", "over": "4s", "steps": 4}}])");
  REQUIRE(s.ok());
  const std::vector<std::pair<double, double>> expected = {{11, 400e6}, {12, 300e6}, {13, 200e6}, {14, 100e6}};
  CHECK(rates(*s, "b") == expected);
}

TEST_CASE("CSV and Mahimahi traces become rate changes, looping when asked", "[scenario]") {
  files["dir/up.csv"] = "time_s,rate\n0,1Gbit\n1.5,200Mbit\n";
  auto csv =
      parse_two_links(R"([{"at": "0s", "link": "a", "trace": {"file": "up.csv", "loop": true, "period": "20s"}}])");
  REQUIRE(csv.ok());
  const auto r = rates(*csv, "a");
  REQUIRE(r.size() == 6);  // three passes of two points in 60 s
  CHECK(r[3] == std::pair<double, double>{21.5, 200e6});
  // 10 opportunities in the first 100 ms, 5 in the second: 1.2 and 0.6 Mbit/s.
  files["dir/cell.mm"] = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n110\n120\n130\n140\n150\n";
  auto mm = parse_two_links(R"([{"at": "1s", "link": "a", "trace": {"file": "cell.mm", "format": "mahimahi"}}])");
  REQUIRE(mm.ok());
  const std::vector<std::pair<double, double>> expected = {{1.0, 1.2e6}, {1.1, 0.6e6}};
  const auto got = rates(*mm, "a");
  REQUIRE(got.size() == 2);
  CHECK(got[0].second == Approx(expected[0].second));
  CHECK(got[1].first == Approx(1.1));
  CHECK(got[1].second == Approx(expected[1].second));
}

TEST_CASE("loops repeat their events and flows are validated and timed", "[scenario]") {
  auto s = parse_two_links(R"([{"at": "0s", "loop": {"every": "20s", "until": "50s", "timeline": [
                       {"at": "5s", "link": "a", "rate": "10Mbit"},
                       {"at": "1s", "flow": {"from": "n0", "to": "n1", "streams": 2, "duration": "3s"}}]}}])");
  REQUIRE(s.ok());
  const std::vector<std::pair<double, double>> expected = {{5, 10e6}, {25, 10e6}, {45, 10e6}};
  CHECK(rates(*s, "a") == expected);
  CHECK(s->flow_events() == 6);  // three starts, three stops
  const auto* start = std::get_if<FlowStart>(&s->events[0].action);
  REQUIRE(start != nullptr);
  CHECK(start->flow.streams == 2);
  CHECK(start->flow.congestion == "cubic");
  CHECK(start->flow.name == "n0-n1");
}

TEST_CASE("scenario errors name the file, the JSON path and what was expected", "[scenario]") {
  CHECK(two_links_error(R"([{"at": "2s", "link": "a", "rate": "fast"}])") ==
        "dir/t.json: /timeline/0/rate: expected a rate like \"500Mbit\", got \"fast\" (no number at the start)");
  CHECK_THAT(two_links_error(R"([{"at": "2s", "link": "zz", "rate": "1Mbit"}])"),
             Catch::Contains("/timeline/0/link: unknown link \"zz\""));
  CHECK_THAT(two_links_error(R"([{"at": "2s", "link": "a", "rate": "1Mbit", "colour": "red"}])"),
             Catch::Contains("/timeline/0/colour: unknown key; expected one of: at, link"));
  CHECK_THAT(two_links_error(R"([{"link": "a", "rate": "1Mbit"}])"),
             Catch::Contains("/timeline/0/at: missing; expected a duration"));
  CHECK_THAT(two_links_error(R"([{"at": "1s", "link": "a"}])"),
             Catch::Contains("expected exactly one of \"rate\", \"flow\""));
  CHECK_THAT(
      two_links_error(R"([{"at": "1s", "link": "a", "periodic": {"period": "2s", "on": "3s", "rate": "1Mbit"}}])"),
      Catch::Contains("/timeline/0/periodic/on: expected a duration below the period"));
  CHECK_THAT(two_links_error(R"([{"at": "1s", "flow": {"from": "n0", "to": "n9"}}])"),
             Catch::Contains("/timeline/0/flow/to: unknown node \"n9\""));
  CHECK_THAT(two_links_error(R"([{"at": "1s", "flow": {"from": "n0", "to": "n1", "protocol": "udp"}}])"),
             Catch::Contains("a UDP flow needs a rate"));
  CHECK_THAT(two_links_error(R"([{"at": "1s", "link": "a", "trace": {"file": "missing.csv"}}])"),
             Catch::Contains("/timeline/0/trace/file: open(dir/missing.csv): No such file"));
  CHECK_THAT(two_links_error("[]", R"(, "loss": "lots")"), Catch::Contains("/links/0/loss: expected a percentage"));
  CHECK_THAT(two_links_error("[]", R"(, "preemption": "polite")"), Catch::Contains("/links/0/preemption: expected"));
  CHECK_THAT(two_links_error("[]", R"(, "workload_share": 0.5)"),
             Catch::Contains("only meaningful with \"preemption\": \"split\""));
  CHECK_THAT(two_links_error("[]", R"(, "qdisc": "tbf", "delay": "5ms")"), Catch::Contains("use \"htb\""));
  CHECK_THAT(two_links_error("{}"), Catch::Contains("/timeline: expected an array, got object"));
}

TEST_CASE("top-level scenario errors are precise", "[scenario]") {
  const auto err = [](const std::string& text) { return parse_scenario(text, "s.json", nullptr).error().message; };
  CHECK_THAT(err("{"), Catch::StartsWith("s.json: ") && Catch::Contains("parse error"));
  CHECK_THAT(err(R"({"schema": "contend.scenario/2"})"), Catch::Contains("/schema: expected \"contend.scenario/1\""));
  CHECK_THAT(err(R"({"schema": "contend.scenario/1", "name": "x", "duration": "1s", "nodes": ["n0"], "links": []})"),
             Catch::Contains("/nodes: expected 2 to 250 nodes"));
  CHECK_THAT(err(R"({"schema": "contend.scenario/1", "name": "x", "duration": "1s", "nodes": ["n0", "n0"]})"),
             Catch::Contains("/nodes/1: node \"n0\" is listed twice"));
  CHECK_THAT(err(R"({"schema": "contend.scenario/1", "name": "x y", "duration": "1s"})"),
             Catch::Contains("/name: expected"));
  CHECK_THAT(err(R"({"schema": "contend.scenario/1", "name": "x", "duration": "1s", "nodes": ["n0", "n1"],
                     "links": [{"name": "l", "from": "n0", "to": "n0", "rate": "1Gbit"}]})"),
             Catch::Contains("/links/0/to: a link joins two different nodes"));
}

TEST_CASE("delay or loss on a link means the scenario needs netem", "[scenario]") {
  auto s = parse_two_links("[]", R"(, "delay": "5ms", "loss": "0.1%")");
  REQUIRE(s.ok());
  CHECK(s->needs_netem());
  CHECK(s->links[0].loss_fraction == Approx(0.001));
  CHECK(s->links[0].delay == std::chrono::milliseconds(5));
}

TEST_CASE("a link's discipline is checked against what the registry says it can do", "[scenario]") {
  CHECK_THAT(two_links_error("[]", R"(, "qdisc": "cake")"),
             Catch::Contains("/links/0/qdisc: expected \"htb\", \"tbf\" or \"fair-queue\", got \"cake\""));
  CHECK_THAT(two_links_error("[]", R"(, "qdisc": "fair-queue", "delay": "5ms")"),
             Catch::Contains("/links/0/qdisc: fair-queue takes no netem for delay and loss; use \"htb\""));
  CHECK_THAT(two_links_error("[]", R"(, "qdisc": "tbf", "preemption": "fair")"),
             Catch::Contains("/links/0/qdisc: tbf has no preemption classes for \"preemption\"; use \"htb\""));
  const std::string fast_tbf = R"({"schema": "contend.scenario/1", "name": "x", "duration": "1s", "nodes": ["a", "b"],
    "links": [{"name": "l", "from": "a", "to": "b", "rate": "20Gbit", "qdisc": "tbf"}]})";
  CHECK_THAT(parse_scenario(fast_tbf, "x.json", nullptr).error().message,
             Catch::Contains("x.json: /links/0/rate: tbf installs 8kbit to 17Gbit on this link") &&
                 Catch::Contains("got 20Gbit"));
  CHECK_THAT(two_links_error(R"([{"at": "1s", "link": "a", "rate": "18Gbit"}])", R"(, "qdisc": "tbf")"),
             Catch::Contains("/timeline/0/rate: link \"a\": tbf installs 8kbit to 17Gbit on this link"));
  auto htb = parse_two_links(R"([{"at": "1s", "link": "a", "rate": "18Gbit"}])");
  REQUIRE(htb.ok());
  CHECK(htb->links[0].qdisc == "htb");
  auto tbf = parse_two_links(R"([{"at": "1s", "link": "a", "rate": "17Gbit"}])", R"(, "qdisc": "tbf")");
  REQUIRE(tbf.ok());
  CHECK(tbf->links[0].qdisc == "tbf");
}

TEST_CASE("a flow's message size is 1B to 64MiB: larger or empty messages are refused at parse time", "[scenario]") {
  const auto flow = [](const std::string& size) {
    return R"([{"at": "1s", "flow": {"from": "n0", "to": "n1", "message_size": ")" + size + R"("}}])";
  };
  CHECK_THAT(two_links_error(flow("100GiB")),
             Catch::Contains("dir/t.json: /timeline/0/flow/message_size: expected 1B to 64MiB") &&
                 Catch::Contains("got 100GiB"));
  CHECK_THAT(two_links_error(flow("0B")), Catch::Contains("/timeline/0/flow/message_size: expected 1B to 64MiB"));
  auto s = parse_two_links(flow("64MiB"));
  REQUIRE(s.ok());
  CHECK(std::get<FlowStart>(s->events[0].action).flow.message_bytes == (std::uint64_t{64} << 20));
  CHECK(parse_two_links(flow("1B")).ok());
}

namespace {
// The error of a one-hour scenario (links a and b as above) with `timeline`.
std::string hour_error(const std::string& timeline) {
  const std::string text = R"({"schema": "contend.scenario/1", "name": "t", "duration": "1h",
    "nodes": ["n0", "n1", "n2"],
    "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "1Gbit"},
              {"name": "b", "from": "n1", "to": "n2", "rate": "500Mbit"}],
    "timeline": )" + timeline +
                           "}";
  auto s = parse_scenario(text, "dir/t.json", [](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) {
      return make_error(Errc::kNotFound, "open(" + path + "): No such file or directory");
    }
    return it->second;
  });
  REQUIRE_FALSE(s.ok());
  return s.error().message;
}
}  // namespace

TEST_CASE("patterns that would expand to millions of events are refused when the scenario is read", "[scenario]") {
  const std::string too_many = "expands to more than 250000 events";
  // Periods, gaps and passes below 1 ms: the player could not play them as written.
  CHECK_THAT(hour_error(R"([{"at": "0s", "link": "a", "periodic": {"period": "2us", "on": "1us", "rate": "1Mbit"}}])"),
             Catch::Contains("dir/t.json: /timeline/0/periodic/period: expected at least 1ms, got 2us"));
  CHECK_THAT(
      hour_error(R"([{"at": "0s", "link": "a", "random": {"mean_gap": "1ns", "duration": "1s", "rate": "1Mbit"}}])"),
      Catch::Contains("/timeline/0/random/mean_gap: expected at least 1ms"));
  CHECK_THAT(hour_error(R"([{"at": "0s", "loop": {"every": "1us", "timeline": []}}])"),
             Catch::Contains("/timeline/0/loop/every: expected at least 1ms"));
  // Long enough periods, but too many of them in an hour: refused before any is made.
  CHECK_THAT(hour_error(R"([{"at": "0s", "link": "*", "periodic": {"period": "10ms", "on": "5ms", "rate": "1Mbit"}}])"),
             Catch::Contains("dir/t.json: /timeline/0/periodic: " + too_many));
  CHECK_THAT(
      hour_error(R"([{"at": "0s", "link": "a", "random": {"mean_gap": "1ms", "duration": "1ms", "rate": "1Mbit"}}])"),
      Catch::Contains("/timeline/0/random: " + too_many));
  CHECK_THAT(hour_error(R"([{"at": "0s", "loop": {"every": "1ms", "timeline": []}}])"),
             Catch::Contains("/timeline/0/loop: " + too_many));
  // Nested loops share one budget.
  CHECK_THAT(hour_error(R"([{"at": "0s", "loop": {"every": "1s", "timeline": [
                              {"at": "0s", "loop": {"every": "10ms", "until": "1h", "timeline": []}}]}}])"),
             Catch::Contains(too_many));
  files["dir/fast.csv"] = "0,1Gbit\n0.001,2Gbit\n0.002,1Gbit\n0.003,2Gbit\n";
  CHECK_THAT(hour_error(R"([{"at": "0s", "link": "a", "trace": {"file": "fast.csv", "loop": true, "period": "4ms"}}])"),
             Catch::Contains("/timeline/0/trace: " + too_many));
  CHECK_THAT(
      hour_error(R"([{"at": "0s", "link": "a", "trace": {"file": "fast.csv", "loop": true, "period": "10us"}}])"),
      Catch::Contains("/timeline/0/trace/period: expected at least 1ms"));
  files["dir/cell.mm"] = "1\n2\n";
  CHECK_THAT(
      hour_error(R"([{"at": "0s", "link": "a", "trace": {"file": "cell.mm", "format": "mahimahi", "bin": "1us"}}])"),
      Catch::Contains("/timeline/0/trace/bin: expected at least 1ms"));
}

TEST_CASE("trace files are bounded while they are read, whatever their length", "[scenario]") {
  std::string many = "time_s,rate\n";
  for (int i = 0; i <= 1'000'000; ++i) {
    many += std::to_string(i) + ",1Gbit\n";
  }
  files["dir/many.csv"] = many;
  CHECK_THAT(two_links_error(R"([{"at": "0s", "link": "a", "trace": {"file": "many.csv"}}])"),
             Catch::Contains("dir/many.csv:1000002:1: more than 1000000 points, the most a trace may hold"));
  // One opportunity a day for 30 years would be 10^8 bins of 100 ms.
  files["dir/long.mm"] = "1\n1000000000000\n";
  CHECK_THAT(two_links_error(R"([{"at": "0s", "link": "a", "trace": {"file": "long.mm", "format": "mahimahi"}}])"),
             Catch::Contains("dir/long.mm:2: at 1000000000000 ms the trace spans more than 1000000 bins"));
  // A trace whose points lie mostly after the scenario's end counts only those before it.
  files["dir/late.csv"] = "0,1Gbit\n" + std::string("30,2Gbit\n") + "1000000,1Gbit\n";
  CHECK(rates(*parse_two_links(R"([{"at": "0s", "link": "a", "trace": {"file": "late.csv"}}])"), "a").size() == 2);
}

TEST_CASE("rates outside what the link's discipline installs are refused, naming the range", "[scenario]") {
  // HTB: each class at least 8 kbit (a 192 KiB burst in 32-bit ticks), the link at most 4 Tbit
  // (a 4 ms burst in 32 bits).
  CHECK_THAT(two_links_error("[]", R"(, "rate": "1e30Gbit")"),
             Catch::Contains("dir/t.json: /links/0/rate: htb installs 16kbit to 4Tbit on this link"));
  const std::string slow = two_links_error(R"([{"at": "1s", "link": "a", "rate": "1bit"}])");
  CHECK_THAT(slow, Catch::Contains("/timeline/0/rate: link \"a\": htb installs 16kbit to 4Tbit on this link") &&
                       Catch::Contains("each class at least 8kbit") && Catch::Contains("got 1bit"));
  // Under split the smaller class sets the lowest rate: 8 kbit / 0.1.
  CHECK_THAT(two_links_error("[]", R"(, "rate": "50kbit", "preemption": "split", "workload_share": 0.9)"),
             Catch::Contains("htb installs 80kbit to 4Tbit on this link"));
  // A queue per flow: each of its 16 queues at least 8 kbit.
  CHECK_THAT(two_links_error("[]", R"(, "rate": "100kbit", "qdisc": "fair-queue")"),
             Catch::Contains("fair-queue installs 128kbit to 4Tbit on this link (each of its 16 flow queues at least "
                             "8kbit), got 100kbit"));
  CHECK(parse_two_links("[]", R"(, "rate": "128kbit", "qdisc": "fair-queue")").ok());
  CHECK(parse_two_links(R"([{"at": "1s", "link": "a", "rate": "16kbit"}])").ok());
  CHECK(parse_two_links(R"([{"at": "1s", "link": "a", "rate": "4Tbit"}])").ok());
  CHECK_THAT(two_links_error(R"([{"at": "1s", "link": "a", "ramp": {"to": "5Tbit", "over": "1s"}}])"),
             Catch::Contains("/timeline/0/ramp/rate: link \"a\": htb installs"));
  files["dir/slow.csv"] = "0,1Gbit\n2,4kbit\n";
  CHECK_THAT(two_links_error(R"([{"at": "0s", "link": "a", "trace": {"file": "slow.csv"}}])"),
             Catch::Contains("/timeline/0/trace/file: dir/slow.csv: the rate at 2s: link \"a\": htb installs 16kbit"));
  CHECK_THAT(two_links_error(R"([{"at": "0s", "link": "a", "trace": {"file": "slow.csv", "scale": 10000}}])"),
             Catch::Contains("the rate at 0s (scaled): link \"a\": htb installs 16kbit to 4Tbit"));
  // A flow's pacing rate: 8 kbit to 4 Tbit.
  CHECK_THAT(two_links_error(R"([{"at": "1s", "flow": {"from": "n0", "to": "n1", "rate": "1bit"}}])"),
             Catch::Contains("/timeline/0/flow/rate: expected \"unlimited\" or a positive rate like \"500Mbit\" from "
                             "8kbit to 4Tbit, got \"1bit\""));
}

TEST_CASE("every event kind is named once and written to the events log with its own fields", "[scenario]") {
  std::set<std::string> names;
  for (const EventKindInfo& k : kEventKinds) {
    CHECK(names.insert(k.name).second);
    CHECK(std::string(k.help).size() > 10);
  }
  CHECK(names.size() == std::variant_size_v<EventAction>);
  FlowSpec flow;
  flow.name = "f";
  flow.from = "a";
  flow.to = "b";
  const std::vector<Event> events = {{1, SetRate{"l", 5e6}, "/timeline/0"},
                                     {2, SetStall{"l", 0.03, 7}, "/timeline/1"},
                                     {3, FlowStart{flow}, "/timeline/2"},
                                     {4, FlowStop{flow}, "/timeline/2"},
                                     {5, SetLinkState{"l", false}, "/timeline/3"}};
  REQUIRE(events.size() == kEventKinds.size());  // one of each kind
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::ordered_json line = event_record(events[i]);
    CHECK(line["kind"] == kEventKinds[events[i].action.index()].name);
    CHECK(line["scheduled_s"] == events[i].at_s);
    CHECK(line["origin"] == events[i].origin);
  }
  CHECK(event_record(events[0])["rate_bps"] == 5e6);
  CHECK(event_record(events[1])["iteration"] == 7);
  CHECK(event_record(events[1])["stall_s"] == 0.03);
  CHECK(event_record(events[3])["flow"] == "f");
  CHECK(event_record(events[3])["protocol"] == "tcp");
  CHECK(event_record(events[4])["state"] == "down");
}
