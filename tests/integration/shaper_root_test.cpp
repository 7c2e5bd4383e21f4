// [root] Shaper against the kernel: every registered discipline and cluster mode (one class per
// peer) on a veth standing in for a NIC, rates changed in place and read back, counters that move
// with traffic, and removal of everything. Exits 77 (ctest: skipped) without root.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "catch/session.h"
#include "contend/common/units.h"
#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/net/htb_params.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/net/shaper.h"
#include "contend/emulator/net/topology.h"

using namespace contend;
using namespace contend::emulator;

namespace {
Scenario two_nodes(const std::string& name) {
  Scenario s;
  s.name = name;
  s.nodes = {"a", "b"};
  s.links.push_back({"a-b", "a", "b", 1e9});
  return s;
}

NlSocket socket_in(const std::string& ns) {
  auto fd = open_netns(ns);
  REQUIRE(fd.ok());
  auto sock = open_route_socket_in(*fd);
  REQUIRE(sock.ok());
  return std::move(*sock);
}

std::string run_name() {
  return "sh" + std::to_string(::getpid());
}

// What a shell command prints.
std::string output_of(const std::string& command) {
  std::FILE* out = ::popen(command.c_str(), "r");
  REQUIRE(out != nullptr);
  char line[256] = {};
  std::string text;
  while (std::fgets(line, sizeof line, out) != nullptr) {
    text += line;
  }
  ::pclose(out);
  return text;
}
}  // namespace

TEST_CASE("cluster mode shapes each peer address in its own class, changed in place", "[root]") {
  const std::string run = run_name();
  auto topo = Topology::create(plan_topology(two_nodes(run), run));
  REQUIRE(topo.ok());
  const LinkPlan& l = topo->plan().links[0];
  auto shaper = Shaper::install_per_peer(socket_in(l.from.netns), l.from.ifname,
                                         {{{"198.18.0.2"}, 100e6}, {{"198.19.0.2"}, 300e6}}, 10e9);
  REQUIRE(shaper.ok());
  REQUIRE(shaper->set_peer_rate(1, 50e6).ok());
  auto stats = shaper->stats();
  REQUIRE(stats.ok());
  REQUIRE(stats->size() == 3);
  CHECK((*stats)[0].name == "default");
  CHECK((*stats)[1].name == "peer 198.18.0.2");
  CHECK((*stats)[1].rate_bps == Approx(100e6));
  CHECK((*stats)[2].rate_bps == Approx(50e6));
  // Traffic to the second peer lands in its class.
  const std::string cmd =
      "ip netns exec " + l.from.netns + " bash -c 'for i in 1 2 3 4 5; do echo hello > /dev/udp/198.19.0.2/9; done'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto after = shaper->stats();
  REQUIRE(after.ok());
  CHECK((*after)[2].packets >= 5);
  CHECK((*after)[1].packets == (*stats)[1].packets);
}

TEST_CASE("every registered discipline installs, changes its rate in place and reports it", "[root]") {
  const std::string run = run_name();
  auto topo = Topology::create(plan_topology(two_nodes(run), run));
  REQUIRE(topo.ok());
  const LinkPlan& l = topo->plan().links[0];
  for (const DisciplineItem& item : disciplines().items()) {
    const std::string& name = item.entry.name;
    INFO("discipline " << name);
    LinkSpec spec = two_nodes(run).links[0];
    spec.qdisc = name;
    spec.rate_bps = 200e6;
    {
      auto shaper = Shaper::install(socket_in(l.from.netns), l.from.ifname, spec, "198.19.0.1");
      REQUIRE(shaper.ok());
      REQUIRE(shaper->set_rate(300e6).ok());
      auto stats = shaper->stats();
      REQUIRE(stats.ok());
      const auto link = std::find_if(stats->begin(), stats->end(), [](const ClassStats& s) { return s.link_level; });
      REQUIRE(link != stats->end());
      CHECK(link->rate_bps == Approx(300e6));
    }
    // Gone with its Shaper: the next discipline installs on a bare interface.
    CHECK(std::system(
              ("tc -n " + l.from.netns + " qdisc show dev " + l.from.ifname + " | grep -q 'qdisc " + name + " 1:'")
                  .c_str()) != 0);
  }
}

TEST_CASE("every registered discipline installs its lowest and highest rates as asked, bursts intact", "[root]") {
  const std::string run = run_name();
  auto topo = Topology::create(plan_topology(two_nodes(run), run));
  REQUIRE(topo.ok());
  const LinkPlan& l = topo->plan().links[0];
  for (const DisciplineItem& item : disciplines().items()) {
    const std::string& name = item.entry.name;
    LinkSpec spec = two_nodes(run).links[0];
    spec.qdisc = name;
    for (const double rate : {lowest_rate_bps(spec), highest_rate_bps(spec)}) {
      INFO("discipline " << name << " at " << format_rate(rate));
      spec.rate_bps = rate;
      auto shaper = Shaper::install(socket_in(l.from.netns), l.from.ifname, spec, "198.19.0.1");
      REQUIRE(shaper.ok());
      auto stats = shaper->stats();
      REQUIRE(stats.ok());
      const auto link = std::find_if(stats->begin(), stats->end(), [](const ClassStats& c) { return c.link_level; });
      REQUIRE(link != stats->end());
      CHECK(link->rate_bps == Approx(rate).epsilon(1e-6));
      // The kernel keeps the burst as a time in 32-bit ticks: at the lowest rate every bucket
      // still holds its 192 KiB (below it, the time wraps and tc shows a few KB).
      if (rate == lowest_rate_bps(spec)) {
        const bool classes = item.kind.preemption_classes || item.kind.flow_queues > 0;
        const std::string tc = "tc -d -n " + l.from.netns + " " + (classes ? "class" : "qdisc") + " show dev " +
                               l.from.ifname + " | grep -o 'burst [^ ]*' | sort -u";
        CHECK(output_of(tc) == "burst 192Kb/1\n");
      }
    }
  }
}

TEST_CASE("an HTB link's leaf queues hold 50 ms at the link's rate, also once the rate changed", "[root]") {
  const std::string run = run_name();
  auto topo = Topology::create(plan_topology(two_nodes(run), run));
  REQUIRE(topo.ok());
  const LinkPlan& l = topo->plan().links[0];
  LinkSpec spec = two_nodes(run).links[0];
  spec.rate_bps = 200e6;
  auto shaper = Shaper::install(socket_in(l.from.netns), l.from.ifname, spec, "198.19.0.1");
  REQUIRE(shaper.ok());
  const std::string leaves = "tc -n " + l.from.netns + " qdisc show dev " + l.from.ifname +
                             " | grep -o 'bfifo [0-9]*: parent 1:[0-9]* limit [0-9]*b'";
  const auto expect = [](double rate) {
    const std::string limit = " limit " + std::to_string(queue_bytes_for(rate)) + "b\n";
    return "bfifo 10: parent 1:10" + limit + "bfifo 20: parent 1:20" + limit;
  };
  CHECK(queue_bytes_for(200e6) == 192 * 1024 + 1250000);
  CHECK(output_of(leaves) == expect(200e6));
  REQUIRE(shaper->set_rate(50e6).ok());
  CHECK(output_of(leaves) == expect(50e6));
}

TEST_CASE("a second HTB install on the same interface is refused and the first keeps working", "[root]") {
  const std::string run = run_name();
  auto topo = Topology::create(plan_topology(two_nodes(run), run));
  REQUIRE(topo.ok());
  const LinkPlan& l = topo->plan().links[0];
  LinkSpec fair = two_nodes(run).links[0];
  fair.preemption = Preemption::kFair;
  auto first = Shaper::install(socket_in(l.from.netns), l.from.ifname, fair, "198.19.0.1");
  REQUIRE(first.ok());
  auto second = Shaper::install(socket_in(l.from.netns), l.from.ifname, fair, "198.19.0.1");
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.error().message, Catch::Contains("rtnl_qdisc_add(" + l.from.ifname + " root htb 1:)"));
  REQUIRE(first->set_rate(400e6).ok());
  auto stats = first->stats();
  REQUIRE(stats.ok());
  CHECK((*stats)[0].rate_bps == Approx(400e6));
  CHECK((*stats)[1].rate_bps == Approx(200e6));  // fair: half each
}

TEST_CASE("topology creation of a 4-node chain is fast and leaves nothing behind", "[root]") {
  const std::string run = run_name();
  Scenario s;
  s.name = run;
  s.nodes = {"n0", "n1", "n2", "n3"};
  for (int i = 0; i < 3; ++i) {
    s.links.push_back({"l" + std::to_string(i), s.nodes[i], s.nodes[i + 1], 1e9});
  }
  const TopologyPlan plan = plan_topology(s, run);
  {
    auto net = Network::create(s, plan_topology(s, run), nullptr);
    REQUIRE(net.ok());
    for (const auto& ns : plan.namespaces()) {
      CHECK(netns_exists(ns));
    }
    REQUIRE(net->set_rate("l1", 123e6).ok());
  }
  for (const auto& ns : plan.namespaces()) {
    CHECK_FALSE(netns_exists(ns));
  }
}

TEST_CASE("link mode puts traffic from the background address in the background class", "[root]") {
  const std::string run = run_name();
  const Scenario s = two_nodes(run);
  auto net = Network::create(s, plan_topology(s, run), nullptr);
  REQUIRE(net.ok());
  const auto packets = [&](const std::string& cls) {
    auto samples = net->sample();
    REQUIRE(samples.ok());
    for (const LinkSample& x : *samples) {
      if (x.node == "a" && x.stats.name == cls) {
        return x.stats.packets;
      }
    }
    FAIL("no class " << cls);
    return std::uint64_t{0};
  };
  const auto send = [&](const char* dst) {
    const std::string cmd = "ip netns exec " + net->plan().links[0].from.netns +
                            " bash -c 'for i in $(seq 10); do echo hi > /dev/udp/" + dst + "/9; done'";
    REQUIRE(std::system(cmd.c_str()) == 0);
  };
  const auto bg0 = packets("background");
  const auto wl0 = packets("workload");
  send("198.19.0.2");  // routed from 198.19.0.1, the background address
  CHECK(packets("background") >= bg0 + 10);
  const auto bg1 = packets("background");
  send("198.18.0.2");  // from the workload address
  CHECK(packets("workload") >= wl0 + 10);
  CHECK(packets("background") == bg1);
}

TEST_CASE("fair-queue gives each flow a queue of its own while it sends, a new flow the idlest", "[root]") {
  const std::string run = run_name();
  auto topo = Topology::create(plan_topology(two_nodes(run), run));
  REQUIRE(topo.ok());
  const LinkPlan& l = topo->plan().links[0];
  LinkSpec spec = two_nodes(run).links[0];
  spec.qdisc = "fair-queue";
  spec.rate_bps = 100e6;
  auto shaper = Shaper::install(socket_in(l.from.netns), l.from.ifname, spec, "");
  REQUIRE(shaper.ok());
  // Only the test's flows: no IPv6 router solicitations or listener reports beside them.
  REQUIRE(std::system(("ip netns exec " + l.from.netns + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1").c_str()) == 0);
  // Packets each flow queue (1:100 to 1:10f) has sent, by minor.
  const auto sent = [&] {
    std::map<std::string, long> out;
    const std::string text = output_of("tc -s -n " + l.from.netns + " class show dev " + l.from.ifname +
                                       " | awk '/class htb 1:1[0-9a-f][0-9a-f] /{c=$3; getline; print c, $4}'");
    std::istringstream in(text);
    std::string minor;
    long packets = 0;
    while (in >> minor >> packets) {
      out[minor] = packets;
    }
    REQUIRE(out.size() == 16);
    return out;
  };
  const auto grew = [](const std::map<std::string, long>& before, const std::map<std::string, long>& after,
                       long at_least) {
    std::vector<std::string> out;
    for (const auto& [minor, packets] : after) {
      if (packets - before.at(minor) >= at_least) {
        out.push_back(minor);
      }
    }
    return out;
  };
  // `flows` flows of `each` datagrams to the peer, a socket each (unconnected: the peer's "port
  // unreachable" stops none of them).
  const auto send = [&](int flows, int each) {
    const std::string cmd = "ip netns exec " + l.from.netns +
                            " python3 -c 'import socket, sys\n"
                            "for f in range(int(sys.argv[1])):\n"
                            "  s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                            "  for i in range(int(sys.argv[2])): s.sendto(b\"hi\", (\"198.18.0.2\", 9))\n"
                            "  s.close()' " +
                            std::to_string(flows) + " " + std::to_string(each);
    REQUIRE(std::system(cmd.c_str()) == 0);
  };
  const auto start = sent();
  send(1, 20);
  const auto one = sent();
  const auto first = grew(start, one, 20);
  REQUIRE(first.size() == 1);  // one flow, one queue (an ARP exchange may take another)
  send(8, 3);
  const auto eight = sent();
  const auto next = grew(one, eight, 3);
  CHECK(next.size() == 8);  // eight flows, eight other queues
  CHECK(std::find(next.begin(), next.end(), first.front()) == next.end());
  // The whole link's entry counts them all.
  auto stats = shaper->stats();
  REQUIRE(stats.ok());
  REQUIRE(stats->size() == 1);
  CHECK(stats->front().link_level);
  CHECK(stats->front().packets >= 44);
}

int main(int argc, char** argv) {
  if (::geteuid() != 0) {
    std::puts("SKIP: needs root (network namespaces and tc)");
    return 77;
  }
  return contend::test::run_catch(argc, argv);
}
