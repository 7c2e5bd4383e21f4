#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "contend/runner/experiment/experiment.h"
#include "contend/runner/real/launcher.h"
#include "contend/runner/results/summary.h"
#include "contend/runner/results/throughput.h"
#include "contend/runner/simulated/calibration.h"
#include "contend/runner/simulated/simulate.h"
#include "contend/runner/truth/network.h"

using namespace contend;
using namespace contend::runner;

namespace {

// `spec` resolved for `w`'s shape, as an experiment resolves its schedules.
pipeline::ScheduleChoice resolved(const Spec& spec, const Workload& w) {
  auto choice = pipeline::resolve_schedule(spec, w.stages, w.microbatches);
  REQUIRE(choice.ok());
  return *choice;
}
// Two emulated stages whose 1 MiB tensors weigh more than their compute on a shaped link.
Workload two_stages() {
  Workload w;
  w.stages = 2;
  w.microbatches = 8;
  w.iterations = 3;
  w.warmup = 0;
  w.emulated.forward = std::chrono::milliseconds(2);
  w.emulated.backward = std::chrono::milliseconds(4);
  w.emulated.activation_bytes = 1 << 20;
  return w;
}

// Four stages of 16 micro-batches of 256 KiB, measured from the first iteration.
Workload four_stages(int iterations) {
  Workload w;
  w.stages = 4;
  w.microbatches = 16;
  w.iterations = iterations;
  w.warmup = 0;
  w.emulated.activation_bytes = 256 * 1024;
  return w;
}

// An experiment "in" experiments/, so scenario paths resolve against the repository's.
Result<Experiment> parse(const std::string& body) {
  return parse_experiment(R"({"schema": "contend.experiment/1", "name": "t", )" + body + "}",
                          std::string(CONTEND_SOURCE_DIR) + "/experiments/t.json");
}
const std::string kGood = R"("scenarios": ["../emulator/scenarios/steady.json", "../emulator/scenarios/periodic.json"],
  "workload": {"stages": 4, "microbatches": 8, "fwd": "5ms", "activation": "256KiB"},
  "schedules": ["1f1b", "kfkb:k=2", "adaptive"], "repetitions": 2)";

std::string error_of(const std::string& body) {
  auto e = parse(body);
  REQUIRE_FALSE(e.ok());
  return e.error().message;
}

// The workload a worker's options hand it (--workload), decoded as the worker decodes it.
Result<Workload> workload_given(const std::vector<std::string>& argv) {
  const auto at = std::find(argv.begin(), argv.end(), "--workload");
  REQUIRE(at + 1 < argv.end());
  auto json = parse_json(*(at + 1), "--workload");
  REQUIRE(json.ok());
  return pipeline::parse_workload(JsonReader(*json, "--workload"));
}
}  // namespace

TEST_CASE("an experiment parses with defaults and expands scenario, schedule, repetition", "[runner]") {
  auto e = parse(kGood);
  REQUIRE(e.ok());
  CHECK(e->scenarios.size() == 2);
  CHECK(e->workload.microbatches == 8);
  CHECK(e->workload.emulated.forward == std::chrono::milliseconds(5));
  CHECK(e->workload.emulated.backward == std::chrono::milliseconds(20));  // default
  CHECK(e->workload.emulated.activation_bytes == 256u * 1024);
  CHECK(e->baseline == "1f1b");
  const auto cells = expand(*e);
  REQUIRE(cells.size() == 2 * 3 * 2);
  CHECK(cells[0].id == "steady.1f1b.r1");
  CHECK(cells[1].id == "steady.kfkb-k-2.r1");  // repetition by repetition: the schedules alternate
  CHECK(cells[4].id == "steady.kfkb-k-2.r2");
  CHECK(cells.back().id == "periodic.adaptive.r2");
  CHECK(e->workload.samples_per_iteration() == 8 * 4);
}

TEST_CASE("bad experiment files say where and what", "[runner]") {
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {}, "schedules": ["1f1b"],
    "colour": "red")"),
             Catch::Contains("colour"));
  CHECK_THAT(error_of(R"("scenarios": ["nope.json"], "workload": {}, "schedules": ["1f1b"])"),
             Catch::Contains("/scenarios/0") && Catch::Contains("nope.json"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"stages": 3},
    "schedules": ["1f1b"])"),
             Catch::Contains("4 nodes") && Catch::Contains("3 stages"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"fwd": "soon"},
    "schedules": ["1f1b"])"),
             Catch::Contains("/workload/fwd"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["kfkb:k=2", "zigzag"])"),
             Catch::Contains("/schedules/1"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"],
    "workload": {"backend": "cpu", "layers": 4}, "schedules": ["1f1b", "interleaved:v=2"])"),
             Catch::Contains("/schedules/1") && Catch::Contains("cannot fill 8 stages"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["kfkb:k=2"])"),
             Catch::Contains("/baseline") && Catch::Contains("not one of the schedules"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"transport": "gloo"},
    "schedules": ["1f1b"])"),
             Catch::Contains("/workload/transport") && Catch::Contains("known: tcp"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"backend": "tpu"},
    "schedules": ["1f1b"])"),
             Catch::Contains("/workload/backend") && Catch::Contains("known: cpu, emulated"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["kfkb:2", "kfkb:k=2"])"),
             Catch::Contains("/schedules/1") && Catch::Contains("appears twice"));
  CHECK_THAT(error_of(R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {},
    "schedules": ["adaptive:wobble=1"])"),
             Catch::Contains("wobble"));
}

TEST_CASE("a transport that asks for an environment gets its node's link interfaces and a host id", "[runner]") {
  pipeline::transports().add(
      {"", "test-env", "a transport that wants an environment (this test's)", {}},
      pipeline::TransportKind{.environment = [](const std::vector<std::string>& ifnames, const std::string& host_id) {
        std::vector<std::string> out = ifnames;
        out.push_back("HOST=" + host_id);
        return out;
      }});
  auto e = parse(R"("scenarios": ["../emulator/scenarios/steady.json"],
    "workload": {"stages": 4, "backend": "cpu", "transport": "test-env"}, "schedules": ["1f1b"])");
  REQUIRE(e.ok());
  const auto given = workload_given(worker_options(*e, expand(*e)[0]));
  REQUIRE(given.ok());
  CHECK(given->transport.str() == "test-env");
  CHECK(*given == e->workload);  // cpu: the model's members too
  // The middle node of a chain has two links; the transport gets exactly those, and its namespace.
  const auto plan = emulator::plan_topology(e->scenarios[0], "r");
  const std::string n1 = e->scenarios[0].nodes[1];
  CHECK(worker_environment(e->workload.transport, plan, n1) ==
        std::vector<std::string>{plan.links[0].to.ifname, plan.links[1].from.ifname,
                                 "HOST=" + emulator::node_netns("r", n1)});
  auto tcp = parse(kGood);
  REQUIRE(tcp.ok());
  CHECK(worker_environment(tcp->workload.transport, plan, n1).empty());
}

TEST_CASE("the workload's share of a link follows the scenario's rate changes and flows", "[runner]") {
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", "nodes": ["a", "b", "c"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"},
                    {"name": "cb", "from": "c", "to": "b", "rate": "500Mbit", "preemption": "fair"}],
          "timeline": [{"at": "2s", "link": "ab", "rate": "100Mbit"},
                       {"at": "5s", "flow": {"name": "f", "from": "b", "to": "c", "rate": "400Mbit", "duration": "5s"}}]})",
      "t.json", nullptr);
  REQUIRE(s.ok());
  auto rates = workload_rates(*s);
  REQUIRE(rates.ok());
  REQUIRE(rates->size() == 2);
  CHECK((*rates)[0].rate_at(1) == Approx(kTcpGoodput * 1e9));
  CHECK((*rates)[0].rate_at(3) == Approx(kTcpGoodput * 100e6));
  CHECK((*rates)[1].rate_at(4) == Approx(kTcpGoodput * 500e6));
  CHECK((*rates)[1].rate_at(6) == Approx(kTcpGoodput * 250e6));  // fair: half is the workload's
  CHECK((*rates)[1].rate_at(11) == Approx(kTcpGoodput * 500e6));
}

TEST_CASE("a background flow takes from its own direction of a link only: each end shapes what it sends", "[runner]") {
  // A paced 600 Mbit/s flow from b to a, against the activations, with the gradients.
  auto s = emulator::parse_scenario(
      R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", "nodes": ["a", "b"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "1Gbit"}],
          "timeline": [{"at": "0s", "flow": {"name": "f", "from": "b", "to": "a", "protocol": "udp",
                                               "rate": "600Mbit"}}]})",
      "t.json", nullptr);
  REQUIRE(s.ok());
  auto net = scenario_network(*s);
  REQUIRE(net.ok());
  CHECK(net->links.at({0, 1}).rate_at(1) == Approx(kTcpGoodput * 1e9));   // a -> b: untouched
  CHECK(net->back.at({0, 1}).rate_at(1) == Approx(kTcpGoodput * 400e6));  // b -> a: what the flow leaves
  CHECK((*workload_rates(*s))[0].rate_at(1) == Approx(kTcpGoodput * 1e9));
  // Simulated, the flow slows the gradients alone: between the link fast both ways and slow both.
  const Workload w = two_stages();
  const Spec one_f_one_b = pipeline::parse_schedule_or_policy("1f1b").value();
  const auto throughput = [&](const ScenarioNetwork& n) {
    return *simulated_throughput(*simulate_cell(w, resolved(one_f_one_b, w), n), w);
  };
  const ScenarioNetwork fast(PipelineLinks{{{0, 1}, RateTrace::constant(kTcpGoodput * 1e9)}});
  const ScenarioNetwork slow(PipelineLinks{{{0, 1}, RateTrace::constant(kTcpGoodput * 400e6)}});
  CHECK(throughput(*net) < 0.97 * throughput(fast));
  CHECK(throughput(*net) > 1.03 * throughput(slow));
}

TEST_CASE("a link shaped one way only leaves the other way to the unshaped path", "[runner]") {
  const auto scenario = [](const char* direction) {
    return emulator::parse_scenario(
        std::string(R"({"schema": "contend.scenario/1", "name": "t", "duration": "20s", "nodes": ["a", "b"],
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "200Mbit", "direction": ")") +
            direction + R"("}]})",
        "t.json", nullptr);
  };
  auto forward = scenario("forward");
  auto backward = scenario("backward");
  auto both = scenario("both");
  REQUIRE((forward.ok() && backward.ok() && both.ok()));
  auto net = scenario_network(*forward);
  REQUIRE(net.ok());
  CHECK(net->links.at({0, 1}).rate_at(1) == Approx(kTcpGoodput * 200e6));  // a -> b: shaped
  CHECK(std::isinf(net->back.at({0, 1}).rate_at(1)));                      // b -> a: not
  CHECK(std::isinf((*workload_rates(*backward))[0].rate_at(1)));
  // Simulated, the gradients cross at the measured line rate: one way shaped lies between both
  // ways and neither.
  const Workload w = two_stages();
  RuntimeModel runtime;
  runtime.line_bps = 10e9;
  const Spec one_f_one_b = pipeline::parse_schedule_or_policy("1f1b").value();
  const auto throughput = [&](const emulator::Scenario& s) {
    return *simulated_throughput(*simulate_cell(w, resolved(one_f_one_b, w), *scenario_network(s), runtime), w);
  };
  CHECK(throughput(*forward) > 1.05 * throughput(*both));  // 1.10 here: the ways overlap
  CHECK(throughput(*backward) == Approx(throughput(*forward)).epsilon(0.05));
  const ScenarioNetwork line(PipelineLinks{{{0, 1}, RateTrace::constant(runtime.line_bps)}});
  CHECK(throughput(*forward) <
        0.9 * *simulated_throughput(*simulate_cell(w, resolved(one_f_one_b, w), line, runtime), w));
}

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

TEST_CASE("throughput statistics: median, mean, sample stdev and the t interval", "[runner]") {
  const Stats s = stats_of({10, 12, 14});
  CHECK(s.n == 3);
  CHECK(s.median == 12);
  CHECK(s.mean == 12);
  CHECK(s.stdev == Approx(2));
  CHECK(s.ci95 == Approx(4.303 * 2 / std::sqrt(3.0)));
  CHECK(stats_of({5}).ci95 == 0);
  CHECK(stats_of({1, 2, 3, 4}).median == 2.5);
}

TEST_CASE("summaries give speedups over the baseline and compare by speedup", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  auto ref = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 100}}, {{"s", "kfkb:k=2"}, {120, 120}}});
  CHECK(ref.cells[1].speedup == Approx(1.2));
  CHECK(ref.cells[0].speedup == Approx(1.0));
  // Twice as fast a machine, same ratio: no regression.
  auto fast = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {200, 200}}, {{"s", "kfkb:k=2"}, {240, 240}}});
  CHECK(compare(fast, ref, 0.05).empty());
  // kFkB lost its edge: a regression naming the cell.
  auto slow = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 100}}, {{"s", "kfkb:k=2"}, {105, 105}}});
  auto r = compare(slow, ref, 0.05);
  REQUIRE(r.size() == 1);
  CHECK(r[0].schedule == "kfkb:k=2");
  CHECK_THAT(r[0].what, Catch::Contains("12.5%"));
  CHECK_THAT(regression_table(r), Catch::Contains("kfkb:k=2"));
  auto json = summary_json(ref);
  CHECK(json["schema"] == "contend.summary/1");
  CHECK(json["cells"][1]["throughput"]["median"] == 120.0);
  CHECK(json["cells"][1]["speedup"]["median"] == Approx(1.2));
  CHECK_THAT(summary_csv(ref), Catch::StartsWith("scenario,schedule,repetitions,throughput_median"));
}

TEST_CASE("a cell of one repetition shows no interval in the table, not a zero one", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  const std::string one =
      summary_table(summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100}}, {{"s", "kfkb:k=2"}, {120}}}));
  CHECK_THAT(one, Catch::Contains("1.200") && !Catch::Contains("+/-0") && !Catch::Contains(" 0.0"));
  const std::string two = summary_table(
      summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 102}}, {{"s", "kfkb:k=2"}, {120, 118}}}));
  CHECK_THAT(two, Catch::Contains(" +/-0."));  // the speedup's interval
}

TEST_CASE("cells that never ran show no numbers, not zeros, and are missing to a comparison", "[runner]") {
  const std::vector<std::pair<std::string, std::string>> order = {{"s", "1f1b"}, {"s", "kfkb:k=2"}};
  auto stopped = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100, 101}}});
  const std::string table = summary_table(stopped);
  CHECK_THAT(table, Catch::Contains("not run"));
  CHECK_THAT(table, !Catch::Contains("0.000"));
  CHECK_THAT(summary_csv(stopped), Catch::Contains("s,kfkb:k=2,0,,,,,,"));
  auto ref = summarize("e", "1f1b", "real", order, {{{"s", "1f1b"}, {100}}, {{"s", "kfkb:k=2"}, {120}}});
  auto r = compare(stopped, ref, 0.03);
  REQUIRE(r.size() == 1);
  CHECK(r[0].what == "missing");
  auto simulated = ref;
  simulated.mode = "simulated";
  CHECK_THAT(check_comparable(stopped, simulated, "ref.json").error().message, Catch::Contains("simulated run"));
  auto other = ref;
  other.experiment = "paper";
  CHECK_THAT(check_comparable(stopped, other, "ref.json").error().message, Catch::Contains("experiment \"paper\""));
}

TEST_CASE("a measure window parses within every scenario and is checked", "[runner]") {
  auto e = parse(kGood + R"(, "measure": {"from": "1s", "to": "3s"})");
  REQUIRE(e.ok());
  REQUIRE(e->measure.has_value());
  CHECK(e->measure->from_s == 1);
  CHECK(e->measure->to_s == 3);
  CHECK_FALSE(parse(kGood)->measure.has_value());
  CHECK_THAT(error_of(kGood + R"(, "measure": {"from": "3s", "to": "1s"})"),
             Catch::Contains("/measure/to") && Catch::Contains("after"));
  CHECK_THAT(error_of(kGood + R"(, "measure": {"from": "1s", "to": "1h"})"),
             Catch::Contains("/measure/to") && Catch::Contains("lasts"));
  CHECK_THAT(error_of(kGood + R"(, "measure": {"from": "1s", "until": "2s"})"), Catch::Contains("until"));
}

TEST_CASE("over a window, the samples completed inside it count, an iteration across an end in part", "[runner]") {
  Workload w;
  w.stages = 2;
  w.microbatches = 4;
  w.warmup = 1;
  w.iterations = 2;
  const double n = w.samples_per_iteration();
  // Iterations of 1 s from 10 s on the steady clock; the scenario began at 10 s.
  const std::vector<std::pair<double, double>> its{{10, 1}, {11, 1}, {12, 1}, {13, 1}};
  auto whole = iterations_throughput(its, w, MeasureWindow{0, 4}, 10, "t");
  REQUIRE(whole.ok());
  CHECK(*whole == Approx(n));
  // 1.5 s to 3.5 s: half of the second, the third, half of the fourth: 2 iterations in 2 s.
  auto part = iterations_throughput(its, w, MeasureWindow{1.5, 3.5}, 10, "t");
  REQUIRE(part.ok());
  CHECK(*part == Approx(n));
  const std::vector<std::pair<double, double>> uneven{{10, 1}, {11, 3}};
  CHECK(*iterations_throughput(uneven, w, MeasureWindow{0, 2}, 10, "t") == Approx((n + n / 3) / 2));
  // A cell that ended before the window's end is refused, not counted short.
  auto short_cell = iterations_throughput(its, w, MeasureWindow{1, 5}, 10, "t");
  REQUIRE_FALSE(short_cell.ok());
  CHECK_THAT(short_cell.error().message, Catch::Contains("measure window") && Catch::Contains("iterations"));
  // Without a window: all the iterations given, first start to last end.
  CHECK(*iterations_throughput(its, w, std::nullopt, 0, "t") == Approx(n));
}

TEST_CASE("an iteration log whose rank-0 line lacks its numbers is refused naming the line", "[runner]") {
  char name[] = "/tmp/contend-log-XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  const std::string text =
      "{\"rank\": 1, \"iteration\": 0}\n{\"rank\": 0, \"iteration\": null, \"start_s\": 1, "
      "\"iteration_s\": 1}\n";
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
  Workload w;
  w.warmup = 0;
  w.iterations = 1;
  auto log = read_iteration_log(name);
  auto tp = log ? cell_throughput(*log, w) : Result<double>(log.error());
  ::unlink(name);
  REQUIRE_FALSE(tp.ok());
  CHECK(tp.error().code == Errc::kParse);
  CHECK_THAT(tp.error().message, Catch::Contains(std::string(name) + ":2"));
}

namespace {
// A file holding `text`, removed when the value goes.
struct TempFile {
  explicit TempFile(const std::string& text) {
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
  ~TempFile() { ::unlink(name); }
  char name[32] = "/tmp/contend-cell-XXXXXX";
};
}  // namespace

TEST_CASE("a cell whose measured iterations ran past its scenario is refused, a stopped worker shows in its spread",
          "[runner]") {
  Workload w;
  w.warmup = 1;
  w.iterations = 3;
  // Rank 0's iterations of 1 s from the scenario's time 0 (steady clock 100), the third 20 s long.
  const TempFile metrics(R"({"rank": 0, "iteration": 0, "start_s": 100, "iteration_s": 1}
{"rank": 0, "iteration": 1, "start_s": 101, "iteration_s": 1}
{"rank": 0, "iteration": 2, "start_s": 102, "iteration_s": 20}
{"rank": 0, "iteration": 3, "start_s": 122, "iteration_s": 1}
)");
  const TempFile long_enough(R"({"kind": "start", "steady_s": 100, "duration_s": 60})"
                             "\n");
  const TempFile too_short(R"({"kind": "start", "steady_s": 100, "duration_s": 4})"
                           "\n");
  auto log = read_iteration_log(metrics.name);
  REQUIRE(log.ok());
  CHECK(cell_throughput(*log, w, std::nullopt, long_enough.name).ok());
  auto refused = cell_throughput(*log, w, std::nullopt, too_short.name);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("ran until 23s of the scenario's clock, past its duration (4s)"));
  // Measured over a window inside the scenario, what ran after it does not matter.
  CHECK(cell_throughput(*log, w, MeasureWindow{0.5, 1.5}, too_short.name).ok());
  const IterationSpread spread = iteration_spread(*log, w);
  CHECK(spread.median_s == 1);
  CHECK(spread.slowest_s == 20);
  CHECK(spread.slowest == 2);
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

TEST_CASE("a scenario's network is written once and read back as the same rates and stalls", "[runner]") {
  NetworkTruth truth;
  truth.links = {RateTrace::constant(956e6), RateTrace::from_points({{0, 956e6}, {2.5, 95.6e6}, {4, 956e6}}).value()};
  StallSchedule stall;
  stall.add_at_time(1.0, 0.03);
  stall.add_at_iteration(15, 0.02);
  stall.add_at_iteration(85, 0);
  truth.stalls[{1, 2}] = stall;
  const std::string path = "/tmp/contend-truth-test-" + std::to_string(::getpid()) + ".json";
  REQUIRE(write_truth(path, "periodic", truth).ok());
  auto read = read_truth(path);
  std::remove(path.c_str());
  REQUIRE(read.ok());
  REQUIRE(read->links.size() == 2);
  CHECK(read->links[0].rate_at(10) == 956e6);
  CHECK(read->links[1].rate_at(3) == 95.6e6);
  CHECK(read->links[1].rate_at(5) == 956e6);
  REQUIRE(read->stalls.count({1, 2}) == 1);
  const StallSchedule& back = read->stalls.at({1, 2});
  CHECK(back.at(0.5, 0) == 0);
  CHECK(back.at(1.5, 0) == 0.03);
  CHECK(back.at(0.5, 20) == 0.02);
  CHECK(back.at(0.5, 90) == 0);
  CHECK(read->back.empty());  // none written: the other way is as `links`
  // The other way where it differs, a way nothing shapes among them (JSON holds no infinity).
  truth.back = {RateTrace::unlimited(), RateTrace::constant(50e6)};
  REQUIRE(write_truth(path, "periodic", truth).ok());
  read = read_truth(path);
  REQUIRE(read.ok());
  REQUIRE(read->back.size() == 2);
  CHECK(std::isinf(read->back[0].rate_at(1)));
  CHECK(read->back[1].rate_at(1) == 50e6);
  std::ofstream(path) << R"({"schema": "contend.truth/1", "scenario": "s", "links": [[[0, 1e9]], [[0, 1e9]]],
                            "back": [[[0, 1e9]]]})";
  read = read_truth(path);
  std::remove(path.c_str());
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(read.error().message, Catch::Contains("/back") && Catch::Contains("one list of points per link"));
  CHECK_THAT(read_truth("/nonexistent/truth.json").error().message, Catch::Contains("/nonexistent/truth.json"));
  // A scenario's traces may hold a million points: its truth file is past the 4 MiB and 2^20
  // values other files are held to, and still read back (its own limits).
  std::vector<RateTrace::Point> points;
  for (int i = 0; i < 400000; ++i) {
    points.push_back({0.001 * i, i % 2 == 0 ? 956e6 : 95.6e6});
  }
  NetworkTruth large;
  large.links = {RateTrace::from_points(points).value()};
  REQUIRE(write_truth(path, "trace", large).ok());
  auto big = read_truth(path);
  std::remove(path.c_str());
  REQUIRE(big.ok());
  CHECK(big->links.at(0).rate_at(399.9995) == 95.6e6);
}

TEST_CASE("a schedule entry may name its own transport and name, so one run compares how sends behave", "[runner]") {
  auto e = parse(R"("scenarios": ["../emulator/scenarios/steady.json"],
    "workload": {"stages": 4, "microbatches": 8, "fwd": "5ms", "activation": "256KiB"},
    "schedules": ["zb", {"schedule": "zb", "transport": "tcp:sends=wait"},
                  {"schedule": "1f1b", "transport": "tcp:sends=wait", "name": "megatron-1f1b"}],
    "baseline": "megatron-1f1b", "repetitions": 1)");
  REQUIRE(e.ok());
  REQUIRE(e->schedules.size() == 3);
  CHECK(e->schedules[1].name == "zb over tcp:sends=wait");
  CHECK(e->baseline == "megatron-1f1b");
  const auto cells = expand(*e);
  REQUIRE(cells.size() == 3);
  CHECK(cells[0].transport.str() == "tcp");
  CHECK(cells[1].transport.str() == "tcp:sends=wait");
  CHECK(cells[1].id == "steady.zb-over-tcp-sends-wait.r1");
  CHECK(cells[2].id == "steady.megatron-1f1b.r1");
  const auto given = workload_given(worker_options(*e, cells[1]));
  REQUIRE(given.ok());
  CHECK(given->transport.str() == "tcp:sends=wait");
  const std::string base = R"("scenarios": ["../emulator/scenarios/steady.json"], "workload": {"stages": 4}, )";
  CHECK_THAT(error_of(base + R"("schedules": ["zb", {"schedule": "zb"}])"), Catch::Contains("appears twice"));
  CHECK_THAT(error_of(base + R"("schedules": [{"schedule": "zb", "sends": "wait"}])"), Catch::Contains("sends"));
  CHECK_THAT(error_of(base + R"("schedules": [{"schedule": "zb", "transport": "pigeon"}])"),
             Catch::Contains("/schedules/0/transport"));
  CHECK_THAT(error_of(base + R"("schedules": ["zb"], "baseline": "fast")"),
             Catch::Contains("not one of the schedules"));
}
