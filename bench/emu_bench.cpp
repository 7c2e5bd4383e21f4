// Emulator timing, as root, on a 2-node network it creates and removes:
//  - rate-change latency in place over netlink (Shaper::set_rate) against forking `tc class
//    change` for the same class, in the same run: p50, p99 and the ratio;
//  - player lateness over 1000 rate changes 5 ms apart (applied - scheduled): p50, p99, max;
//  - creation and removal time of a 4-node chain.
// Run: build/default/bin/contend_bench_emu   (prints a Markdown table)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "contend/common/child_process.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/player.h"

using namespace contend;
using namespace contend::emulator;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

Scenario chain(const std::string& name, int nodes) {
  Scenario s;
  s.name = name;
  s.duration_s = 5.5;
  for (int i = 0; i < nodes; ++i) {
    s.nodes.push_back("n" + std::to_string(i));
  }
  for (int i = 0; i + 1 < nodes; ++i) {
    s.links.push_back({"l" + std::to_string(i), s.nodes[i], s.nodes[i + 1], 1e9});
  }
  return s;
}

int fail(const Error& e) {
  std::fprintf(stderr, "contend_bench_emu: %s\n", e.message.c_str());
  return 1;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Measures {
  std::vector<double> up, down;  // 4-node chain, seconds
  std::vector<double> netlink;   // one link end's in-place change, seconds
  std::vector<double> tc;        // the same by forking tc, seconds
  std::vector<double> late;      // player: applied - scheduled, seconds
};

// Creation and removal of a 4-node chain, five times.
Result<void> measure_up_down(const std::string& run, Measures& m) {
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    const Scenario s4 = chain(run, 4);
    auto net = Network::create(s4, plan_topology(s4, run), nullptr);
    if (!net) {
      return net.error();
    }
    m.up.push_back(seconds_since(t0));
    const auto t1 = Clock::now();
    { auto gone = std::move(*net); }
    m.down.push_back(seconds_since(t1));
  }
  return {};
}

// In-place changes over the warm netlink socket.
Result<void> measure_netlink(Network& net, Measures& m) {
  for (int i = 0; i < 1000; ++i) {
    const auto t0 = Clock::now();
    if (auto ok = net.set_rate("l0", i % 2 == 0 ? 500e6 : 1e9); !ok) {
      return ok;
    }
    m.netlink.push_back(seconds_since(t0) / 2);  // two shaped ends
  }
  return {};
}

// The same change by forking tc, as scripts do.
Result<void> measure_tc(const Network& net, Measures& m) {
  const std::string ns = net.plan().links[0].from.netns;
  const std::string ifname = net.plan().links[0].from.ifname;
  for (int i = 0; i < 200; ++i) {
    const std::string rate = i % 2 == 0 ? "500mbit" : "1gbit";
    const auto t0 = Clock::now();
    auto child = ChildProcess::spawn({"ip",   "netns",  "exec",  ns,        "tc",     "class", "change", "dev",
                                      ifname, "parent", "1:",    "classid", "1:1",    "htb",   "rate",   rate,
                                      "ceil", rate,     "burst", "500000",  "cburst", "500000"});
    if (!child) {
      return child.error();
    }
    auto code = child->wait(std::chrono::seconds(10));
    if (!code || *code != 0) {
      return make_error(Errc::kIo, "tc class change failed");
    }
    m.tc.push_back(seconds_since(t0));
  }
  return {};
}

// Player lateness: 1000 changes 5 ms apart, read back from the event log.
Result<void> measure_lateness(Scenario s, Network& net, const std::string& run, Measures& m) {
  for (int i = 0; i < 1000; ++i) {
    s.events.push_back(Event{0.5 + 0.005 * i, SetRate{"l0", i % 2 == 0 ? 500e6 : 1e9}, "/bench"});
  }
  const std::string log_path = "/tmp/" + run + "-events.jsonl";
  std::remove(log_path.c_str());  // event logs are created exclusively
  {
    auto log = EventLog::open(log_path);
    if (!log) {
      return log.error();
    }
    std::atomic<bool> stop{false};
    if (auto report = play(s, net, *log, stop, PlayerOptions{std::chrono::milliseconds(100), true}); !report) {
      return report.error();
    }
  }
  std::ifstream in(log_path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["kind"] == "rate") {
      m.late.push_back(j["applied_s"].get<double>() - j["scheduled_s"].get<double>());
    }
  }
  std::remove(log_path.c_str());
  return {};
}

double max_of(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

void print_table(const Measures& m) {
  std::printf("| measure | p50 | p99 | n |\n|---|---|---|---|\n");
  std::printf("| rate change, netlink in place (one link end: 3 HTB classes) | %.1f us | %.1f us | %zu |\n",
              1e6 * percentile(m.netlink, 0.5), 1e6 * percentile(m.netlink, 0.99), m.netlink.size());
  std::printf("| rate change, forking `ip netns exec tc class change` | %.0f us | %.0f us | %zu |\n",
              1e6 * percentile(m.tc, 0.5), 1e6 * percentile(m.tc, 0.99), m.tc.size());
  std::printf("| ratio tc / netlink | %.0fx | %.0fx | |\n", percentile(m.tc, 0.5) / percentile(m.netlink, 0.5),
              percentile(m.tc, 0.99) / percentile(m.netlink, 0.99));
  std::printf("| player lateness (applied - scheduled) | %.0f us | %.0f us | %zu (max %.0f us) |\n",
              1e6 * percentile(m.late, 0.5), 1e6 * percentile(m.late, 0.99), m.late.size(), 1e6 * max_of(m.late));
  std::printf("| 4-node chain up (5 namespaces, 7 veth pairs, bridge, 6 HTB trees) | %.1f ms | max %.1f ms | %zu |\n",
              1e3 * percentile(m.up, 0.5), 1e3 * max_of(m.up), m.up.size());
  std::printf("| 4-node chain down | %.1f ms | max %.1f ms | %zu |\n", 1e3 * percentile(m.down, 0.5),
              1e3 * max_of(m.down), m.down.size());
}

}  // namespace

int main() {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "contend_bench_emu: needs root (network namespaces and tc)\n");
    return 77;
  }
  const std::string run = "bench" + std::to_string(::getpid());
  Measures m;
  if (auto ok = measure_up_down(run, m); !ok) {
    return fail(ok.error());
  }
  const Scenario s = chain(run, 2);
  auto net = Network::create(s, plan_topology(s, run), nullptr);
  if (!net) {
    return fail(net.error());
  }
  if (auto ok = measure_netlink(*net, m); !ok) {
    return fail(ok.error());
  }
  if (auto ok = measure_tc(*net, m); !ok) {
    return fail(ok.error());
  }
  if (auto ok = measure_lateness(s, *net, run, m); !ok) {
    return fail(ok.error());
  }
  print_table(m);
  return 0;
}
