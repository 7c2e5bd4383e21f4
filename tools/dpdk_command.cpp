#include "dpdk_command.h"

#include <cstdio>
#include <memory>

#include "cli_units.h"
#include "commands.h"
#include "contend/common/json.h"
#include "contend/common/units.h"
#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/net/run_state.h"
#ifdef CONTEND_HAVE_DPDK
#include "contend/emulator/flows/dpdk_source.h"
#endif

namespace contend::tools {
namespace {

using namespace contend::emulator;

struct DpdkOptions {
  std::string run;
  std::string from;
  std::string to;
  std::string rate = "0bit";
  std::string duration = "2s";
  std::uint32_t frame_bytes = 1500;
};

int run(const DpdkOptions& o) {
#ifndef CONTEND_HAVE_DPDK
  (void)o;
  return fail("dpdk-source",
              "this build has no DPDK (configure with -DCONTEND_WITH_DPDK=ON and libdpdk-dev installed); "
              "the socket generator (contend flows) works without it");
#else
  auto scenario = load_run_scenario(o.run);
  if (!scenario) {
    return fail("dpdk-source", scenario.error().message);
  }
  const TopologyPlan plan = plan_topology(*scenario, o.run);
  FlowSpec spec;
  spec.name = o.from + "-" + o.to;
  spec.from = o.from;
  spec.to = o.to;
  auto ends = flow_endpoints(plan, spec);
  if (!ends) {
    return fail("dpdk-source", ends.error().message);
  }
  // The interface of the source node that leads to the destination.
  std::string iface = "cbr0";
  for (const auto& l : plan.links) {
    if (l.link == ends->via) {
      iface = l.from.node == o.from ? l.from.ifname : l.to.ifname;
    }
  }
  DpdkSourceOptions d;
  d.netns = ends->src_netns;
  d.iface = iface;
  d.src_address = ends->src_address;
  d.dst_address = ends->dst_address;
  d.rate_bps = *parse_rate_bps(o.rate);
  d.frame_bytes = o.frame_bytes;
  d.duration_s = to_seconds(*parse_duration(o.duration));
  auto report = run_dpdk_source(d);
  if (!report) {
    return fail("dpdk-source", report.error().message);
  }
  auto doc = json_document("flows", 1);
  doc["kind"] = "dpdk";
  doc["run"] = o.run;
  doc["from"] = o.from;
  doc["to"] = o.to;
  doc["via"] = ends->via;
  doc["iface"] = iface;
  doc["target_bps"] = d.rate_bps;
  doc["frame_bytes"] = d.frame_bytes;
  doc["seconds"] = report->seconds;
  doc["packets"] = report->packets;
  doc["bytes"] = report->bytes;
  doc["pps"] = report->pps();
  doc["bps"] = report->bps();
  std::printf("%s\n", doc.dump().c_str());
  return 0;
#endif
}

}  // namespace

std::function<int()> add_dpdk_command(CLI::App& sub) {
  auto o = std::make_shared<DpdkOptions>();
  CLI::App* d = &sub;
  d->add_option("--run", o->run, "The run (contend emu up)")->required();
  d->add_option("--from", o->from, "Source node")->required();
  d->add_option("--to", o->to, "Destination node")->required();
  d->add_option("--rate", o->rate, "Frame rate in bits per second (default 0bit: as fast as the port takes)")
      ->check(rate_check());
  d->add_option("--duration", o->duration, "How long to send (default 2s)")->check(duration_check());
  d->add_option("--frame-size", o->frame_bytes, "Ethernet frame bytes, 64-1514 (default 1500)")
      ->check(CLI::Range(64, 1514));
  return [o] { return run(*o); };
}

}  // namespace contend::tools
