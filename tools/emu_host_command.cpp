#include "emu_host_command.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "cli_units.h"
#include "commands.h"
#include "contend/common/units.h"
#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/net/host_links.h"
#include "contend/emulator/net/netns.h"
#include "contend/emulator/player.h"
#include "signals.h"

namespace contend::tools {
namespace {

using namespace contend::emulator;

struct HostOptions {
  std::string scenario;
  std::string node;
  std::string iface;
  std::vector<std::string> peers;  // NODE=ADDRESS
  std::string netns;
  std::string address;
  int flow_port = 41000;
  std::string log = "-";
  std::string default_rate = "100Gbit";
  std::string start_when;  // the timeline waits until this file exists
  bool hold = false;
  bool down = false;
};

// Until `path` exists (true) or `stop` (false); an empty path is there already.
bool wait_for_start(const std::string& path, const std::atomic<bool>& stop) {
  while (!path.empty() && ::access(path.c_str(), F_OK) != 0) {
    if (stop.load()) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

Result<NlSocket> socket_for(const HostOptions& o) {
  if (o.netns.empty()) {
    return open_route_socket();
  }
  auto fd = open_netns(o.netns);
  if (!fd) {
    return fd.error();
  }
  return open_route_socket_in(*fd);
}

// This host's plan from the options: its node and interface, the default class's rate (within
// what one HTB class installs) and the peers' addresses.
Result<HostPlan> host_plan(const HostOptions& o) {
  HostPlan plan;
  plan.node = o.node;
  plan.ifname = o.iface;
  plan.default_bps = *parse_rate_bps(o.default_rate);
  if (const DisciplineKind& htb = find_discipline("htb")->kind;
      !(plan.default_bps >= htb.min_rate_bps && plan.default_bps <= htb.max_rate_bps)) {
    return make_error(Errc::kInvalidArgument, "--default-rate: expected " + format_rate(htb.min_rate_bps) + " to " +
                                                  format_rate(htb.max_rate_bps) +
                                                  " (what one HTB class installs), got " + o.default_rate);
  }
  for (const std::string& p : o.peers) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size()) {
      return make_error(Errc::kInvalidArgument, "--peer \"" + p + "\": expected NODE=ADDRESS");
    }
    plan.addresses[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return plan;
}

int run(const HostOptions& o) {
  auto sock = socket_for(o);
  if (!sock) {
    return fail("emu host", sock.error().message);
  }
  if (o.down) {
    if (auto ok = Shaper::remove_root(std::move(*sock), o.iface); !ok) {
      return fail("emu host", ok.error().message);
    }
    return 0;
  }
  if (o.scenario.empty() || o.node.empty()) {
    return fail("emu host", "give SCENARIO and --node (or --down to remove a leftover tree)");
  }
  auto scenario = load_scenario(o.scenario);
  if (!scenario) {
    return fail("emu host", scenario.error().message);
  }
  auto plan = host_plan(o);
  if (!plan) {
    return fail("emu host", plan.error().message);
  }
  const auto& stop = install_stop_handlers();
  auto links = HostLinks::create(*scenario, *plan, std::move(*sock));
  if (!links) {
    return fail("emu host", links.error().message);
  }
  auto log = EventLog::open(o.log);
  if (!log) {
    return fail("emu host", log.error().message);
  }
  // Background flows: sinks for the flows that reach this host listen from now on; sources start
  // on the timeline.
  HostFlowPlan flow_plan;
  flow_plan.node = o.node;
  flow_plan.netns = o.netns;
  flow_plan.address = o.address;
  flow_plan.addresses = plan->addresses;
  flow_plan.base_port = o.flow_port;
  auto flows = FlowEngine::for_host(*scenario, flow_plan);
  if (!flows) {
    return fail("emu host", flows.error().message);
  }
  std::fprintf(stderr, "contend emu host: %s shapes %zu link(s) on %s\n", o.node.c_str(), links->links().size(),
               o.iface.c_str());
  if (!wait_for_start(o.start_when, stop)) {
    return 128 + stop_signal();  // stopped before the workload started: nothing was played
  }
  auto report = play(*scenario, *links, *log, stop, PlayerOptions{std::chrono::milliseconds(100), true}, flows->get());
  if (!report) {
    return fail("emu host", report.error().message);
  }
  while (o.hold && !stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The qdisc goes with `links`.
  return stop.load() && !o.hold ? 128 + stop_signal() : 0;
}

}  // namespace

std::function<int()> add_emu_host_command(CLI::App& emu) {
  auto o = std::make_shared<HostOptions>();
  CLI::App* h = emu.add_subcommand(
      "host",
      "Cluster hosts (ansible/): shape this host's interface per peer, play its links' timeline and run the "
      "background flows that leave or reach it");
  h->add_option("SCENARIO", o->scenario, "Scenario file (contend.scenario/1)")->check(CLI::ExistingFile);
  h->add_option("--node", o->node, "This host's node in the scenario");
  h->add_option("--iface", o->iface, "The interface toward the other hosts")->required();
  h->add_option("--peer", o->peers, "NODE=ADDRESS of every peer node this host has a link with (repeat)");
  h->add_option("--netns", o->netns, "Shape inside this named namespace (tests: hosts standing in as namespaces)");
  h->add_option("--address", o->address,
                "This host's address toward the others: background flows' sinks listen there and sources send from it "
                "(default: sinks listen on every address)");
  h->add_option("--flow-port", o->flow_port,
                "First port of the background flows' sinks, the same on every host (flow i of the scenario's sorted "
                "flow names listens on FLOW_PORT + i; default 41000)")
      ->check(CLI::Range(1024, 65000));
  h->add_option("--log", o->log, "Event log, contend.events/1 JSON lines (default: stdout)");
  h->add_option("--default-rate", o->default_rate, "Rate for traffic to anyone else (default 100Gbit)")
      ->check(rate_check());
  h->add_option("--start-when", o->start_when,
                "Shape at the base rates now, and start the timeline (the scenario's clock) and the flows' sources "
                "when this file exists: when the workload starts (ansible/ creates it as it starts the workers or "
                "ranks)");
  h->add_flag("--hold", o->hold, "Keep the shaping after the timeline until SIGINT/SIGTERM (then remove it)");
  h->add_flag("--down", o->down, "Remove the root qdisc of --iface (what a crashed run left) and exit");
  return [o, h] { return h->parsed() ? run(*o) : -1; };
}

}  // namespace contend::tools
