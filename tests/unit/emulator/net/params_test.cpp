#include <catch2/catch.hpp>
#include <set>

#include "contend/emulator/net/htb_params.h"
#include "contend/emulator/net/topology.h"
#include "contend/emulator/scenario/mahimahi.h"

using namespace contend;
using namespace contend::emulator;

TEST_CASE("burst is max(4 ms x rate, 192 KiB)", "[shaping]") {
  CHECK(burst_bytes_for(10e6) == 192 * 1024);
  CHECK(burst_bytes_for(100e6) == 192 * 1024);
  CHECK(burst_bytes_for(1e9) == 500000);
  CHECK(burst_bytes_for(20e9) == 10000000);
}

TEST_CASE("HTB classes implement the three preemption policies", "[shaping]") {
  const auto bg = htb_classes(1e9, Preemption::kBackgroundFirst, 0.5);
  CHECK(bg.link.rate_bps == 1e9);
  CHECK(bg.background.prio < bg.workload.prio);
  CHECK(bg.workload.rate_bps == Approx(1e6));
  CHECK(bg.workload.rate_bps + bg.background.rate_bps == Approx(1e9));
  CHECK(bg.workload.ceil_bps == 1e9);
  CHECK(bg.workload.quantum_bytes == 64 * 1024);
  const auto fair = htb_classes(1e9, Preemption::kFair, 0.5);
  CHECK(fair.workload.rate_bps == fair.background.rate_bps);
  CHECK(fair.workload.prio == fair.background.prio);
  CHECK(fair.background.ceil_bps == 1e9);
  const auto split = htb_classes(1e9, Preemption::kSplit, 0.7);
  CHECK(split.workload.rate_bps == Approx(0.7e9));
  CHECK(split.workload.ceil_bps == Approx(0.7e9));
  CHECK(split.background.ceil_bps == Approx(0.3e9));
  CHECK(split.workload.burst_bytes == burst_bytes_for(0.7e9));
}

TEST_CASE("the preemption model gives the workload what the HTB classes leave it", "[shaping]") {
  const double link = 1e9;
  LinkSpec l;
  l.rate_bps = link;
  const auto model = [&](Preemption p, double background_bps, bool running, double share = 0.5) {
    l.preemption = p;
    l.workload_share = share;
    return workload_rate_bps(l, link, background_bps, running);
  };
  // background-first: unpaced background takes all but the workload class's guaranteed rate.
  const auto first = htb_classes(link, Preemption::kBackgroundFirst, 0.5);
  CHECK(model(Preemption::kBackgroundFirst, 0, true) == Approx(first.workload.rate_bps));
  CHECK(model(Preemption::kBackgroundFirst, 0, true) > 0);
  CHECK(model(Preemption::kBackgroundFirst, 300e6, true) == Approx(link - 300e6));
  CHECK(model(Preemption::kBackgroundFirst, 0, false) == Approx(first.workload.ceil_bps));
  // fair: half each when both want more; a paced background leaves the workload the rest.
  const auto fair = htb_classes(link, Preemption::kFair, 0.5);
  CHECK(model(Preemption::kFair, 0, true) == Approx(fair.workload.rate_bps));
  CHECK(model(Preemption::kFair, 200e6, true) == Approx(link - 200e6));
  CHECK(model(Preemption::kFair, 800e6, true) == Approx(fair.workload.rate_bps));
  CHECK(model(Preemption::kFair, 0, false) == Approx(fair.workload.ceil_bps));
  // split: the workload's class is capped at its share, background or not.
  const auto split = htb_classes(link, Preemption::kSplit, 0.7);
  CHECK(model(Preemption::kSplit, 0, true, 0.7) == Approx(split.workload.ceil_bps));
  CHECK(model(Preemption::kSplit, 0, false, 0.7) == Approx(split.workload.ceil_bps));
  CHECK(model(Preemption::kSplit, 0, false, 0.7) == Approx(0.7 * link));
  // No discipline classes (tbf): one queue shared about evenly, whatever "preemption" says.
  l.qdisc = "tbf";
  CHECK(model(Preemption::kBackgroundFirst, 0, true) == Approx(link / 2));
  CHECK(model(Preemption::kBackgroundFirst, 100e6, true) == Approx(link - 100e6));
}

TEST_CASE("a shaped queue holds a burst plus 50 ms at the rate (TBF's, and each HTB leaf's)", "[shaping]") {
  CHECK(queue_bytes_for(1e9) == 500000 + 6250000);
  CHECK(queue_bytes_for(8e3) == 192 * 1024 + 50);  // the 192 KiB burst floor
  CHECK(queue_bytes_for(1e15) == 2147483647u);     // the kernel's 32-bit limit
  const auto p = tbf_params(1e9);
  CHECK(p.burst_bytes == 500000);
  CHECK(p.limit_bytes == 500000 + 6250000);
}

TEST_CASE("Mahimahi traces convert to a rate per bin and report their period", "[trace]") {
  auto t = parse_mahimahi("# comment\n0\n0\n50\n99\n100\n250\n", "x.mm", 0.1);
  REQUIRE(t.ok());
  CHECK(t->period_s == Approx(0.3));
  // Bins of 4, 1 and 1 opportunities; equal neighbours merge into one point.
  REQUIRE(t->rate.points().size() == 2);
  CHECK(t->rate.points()[0].rate_bps == Approx(4 * 12000 / 0.1));
  CHECK(t->rate.points()[1].time_s == Approx(0.1));
  CHECK(t->rate.points()[1].rate_bps == Approx(1 * 12000 / 0.1));
  CHECK_THAT(parse_mahimahi("5\n3\n", "x.mm", 0.1).error().message,
             Catch::Contains("x.mm:2: timestamps must not decrease"));
  CHECK_THAT(parse_mahimahi("1\nabc\n", "x.mm", 0.1).error().message,
             Catch::Contains("x.mm:2:1: expected a whole number of milliseconds") && !Catch::Contains("abc"));
  CHECK_THAT(parse_mahimahi("1\n12secret\n", "x.mm", 0.1).error().message,
             Catch::Contains("x.mm:2:3: expected a whole number") && !Catch::Contains("secret"));
}

TEST_CASE("the topology plan gives unique addresses and interface names that fit IFNAMSIZ", "[topology]") {
  Scenario s;
  for (int i = 0; i < 200; ++i) {
    s.nodes.push_back("node" + std::to_string(i));
  }
  for (int i = 0; i + 1 < 200; ++i) {
    s.links.push_back({"l" + std::to_string(i), s.nodes[i], s.nodes[i + 1], 1e9});
  }
  const TopologyPlan plan = plan_topology(s, "a-long-run-name-24chars");
  std::set<std::string> addresses;
  for (const auto& l : plan.links) {
    for (const InterfacePlan* end : {&l.from, &l.to}) {
      CHECK(end->ifname.size() <= 15);
      CHECK(addresses.insert(end->address).second);
      CHECK(addresses.insert(end->background_address).second);
    }
  }
  for (const auto& p : plan.switch_ports) {
    CHECK(addresses.insert(p.address).second);
  }
  CHECK(plan.links[0].from.address == "198.18.0.1/30");
  CHECK(plan.links[0].to.background_address == "198.19.0.2/32");
  CHECK(plan.links[65].from.address == "198.18.1.5/30");
  CHECK(plan.nodes[3].second == "contend-a-long-run-name-24chars.node3");
  CHECK(plan.namespaces().back() == "contend-a-long-run-name-24chars");
  // Host routes: node0 reaches node1's address on link l1 (198.18.0.5) through link l0, node2
  // node1's address on l0 (198.18.0.2) through l1; node2's own address is nobody's neighbour's.
  const auto route_in = [&](const std::string& netns, const std::string& destination) -> const RoutePlan* {
    for (const auto& r : plan.routes) {
      if (r.netns == netns && r.destination == destination) {
        return &r;
      }
    }
    return nullptr;
  };
  const RoutePlan* r = route_in(plan.links[0].from.netns, "198.18.0.5/32");
  REQUIRE(r != nullptr);
  REQUIRE(r->hops.size() == 1);
  CHECK(r->hops[0].via == "198.18.0.2");
  CHECK(r->hops[0].ifname == plan.links[0].from.ifname);
  REQUIRE(route_in(plan.links[1].to.netns, "198.18.0.2/32") != nullptr);
  CHECK(route_in(plan.links[1].to.netns, "198.18.0.2/32")->hops.at(0).via == "198.18.0.5");
  CHECK(route_in(plan.links[0].from.netns, "198.18.0.6/32") == nullptr);  // node2: not node0's neighbour
  CHECK(r->source.empty());
  // Each end reaches the other's background address through their link, from its own.
  const RoutePlan* bg = route_in(plan.links[0].to.netns, "198.19.0.1/32");
  REQUIRE(bg != nullptr);
  REQUIRE(bg->hops.size() == 1);
  CHECK(bg->hops[0].via == "198.18.0.1");
  CHECK(bg->hops[0].ifname == plan.links[0].to.ifname);
  CHECK(bg->source == "198.19.0.2");
  // Each inner link end reaches one workload address beyond; every link end its peer's background.
  CHECK(plan.routes.size() == 2 * 198 + 2 * 199);
  CHECK(strip_prefix_length(plan.links[0].from.address) == "198.18.0.1");
  CHECK(strip_prefix_length("198.18.0.1") == "198.18.0.1");
  CHECK_FALSE(valid_run_name("has space"));
  CHECK_FALSE(valid_run_name(""));
}

TEST_CASE("no run's namespaces are another's: '-' in run and node names, and a node called sw", "[topology]") {
  const auto plan_of = [](const std::vector<std::string>& nodes, const std::string& run) {
    Scenario s;
    s.nodes = nodes;
    s.links.push_back({"l", nodes[0], nodes[1], 1e9});
    return plan_topology(s, run);
  };
  // Run "foo" with node "bar-n0", run "foo-bar" with node "n0": once both were contend-foo-bar-n0.
  const TopologyPlan foo = plan_of({"bar-n0", "x"}, "foo");
  const TopologyPlan foo_bar = plan_of({"n0", "y"}, "foo-bar");
  for (const std::string& a : foo.namespaces()) {
    for (const std::string& b : foo_bar.namespaces()) {
      CHECK(a != b);
    }
    CHECK(netns_run(a) == "foo");
  }
  for (const std::string& b : foo_bar.namespaces()) {
    CHECK(netns_run(b) == "foo-bar");
  }
  // A node called "sw" is not the switch.
  const TopologyPlan sw = plan_of({"sw", "n1"}, "sw1");
  const std::vector<std::string> names = sw.namespaces();
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  CHECK(sw.switch_netns == "contend-sw1");
  CHECK(sw.nodes[0].second == "contend-sw1.sw");
  CHECK_FALSE(netns_run("other-ns").has_value());
  CHECK_FALSE(valid_run_name("a.b"));
}
