#include "contend/emulator/net/run_status.h"

#include <algorithm>
#include <map>

#include "contend/common/json.h"
#include "contend/emulator/net/netns.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/net/topology.h"

namespace contend::emulator {
namespace {

// A run whose state file or scenario cannot be read, or that has no state file (an orphan): the
// namespaces it records or has, whether each exists, and the problem.
nlohmann::ordered_json degraded_status(const RunSurvey& s) {
  nlohmann::ordered_json doc = json_document("emu-status", 1);
  doc["run"] = s.run;
  doc["scenario"] = s.state ? nlohmann::ordered_json(s.state->scenario) : nlohmann::ordered_json(nullptr);
  doc["problem"] =
      s.recorded ? s.problem : "no state file (a run killed before it recorded one, or made by an older contend)";
  std::vector<std::string> names = s.state ? s.state->namespaces : std::vector<std::string>{};
  for (const std::string& ns : s.namespaces) {
    if (std::find(names.begin(), names.end(), ns) == names.end()) {
      names.push_back(ns);
    }
  }
  auto namespaces = nlohmann::ordered_json::array();
  for (const std::string& ns : names) {
    namespaces.push_back({{"netns", ns}, {"exists", netns_exists(ns)}});
  }
  doc["namespaces"] = namespaces;
  return doc;
}

// Each switch: its namespace, ports (interfaces and addresses) and the routes planned in it.
nlohmann::ordered_json switches_json(const TopologyPlan& plan) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& [name, ns] : plan.switches) {
    auto ports = nlohmann::ordered_json::array();
    for (const auto& l : plan.links) {
      for (const InterfacePlan* end : {&l.from, &l.to}) {
        if (end->node == name) {
          ports.push_back({{"ifname", end->ifname}, {"address", end->address}, {"link", l.link}});
        }
      }
    }
    auto routes = nlohmann::ordered_json::array();
    for (const RoutePlan& r : plan.routes) {
      if (r.netns == ns) {
        auto hops = nlohmann::ordered_json::array();
        for (const NextHop& h : r.hops) {
          hops.push_back({{"via", h.via}, {"ifname", h.ifname}});
        }
        routes.push_back({{"destination", r.destination}, {"next_hops", hops}});
      }
    }
    out.push_back(
        {{"switch", name}, {"netns", ns}, {"exists", netns_exists(ns)}, {"ports", ports}, {"routes", routes}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json processes_json(const std::vector<NetnsProcess>& processes) {
  auto out = nlohmann::ordered_json::array();
  for (const NetnsProcess& p : processes) {
    out.push_back({{"pid", p.pid}, {"netns", p.netns}, {"command", p.command}});
  }
  return out;
}

nlohmann::ordered_json run_status(const std::string& run, const Scenario& scenario) {
  const TopologyPlan plan = plan_topology(scenario, run);
  nlohmann::ordered_json doc = json_document("emu-status", 1);
  doc["run"] = run;
  doc["scenario"] = scenario.source;
  auto nodes = nlohmann::ordered_json::array();
  for (const auto& [node, ns] : plan.nodes) {
    auto addresses = nlohmann::ordered_json::array();
    for (const auto& l : plan.links) {
      for (const InterfacePlan* end : {&l.from, &l.to}) {
        if (end->node == node) {
          addresses.push_back(
              {{"ifname", end->ifname}, {"address", end->address}, {"background", end->background_address}});
        }
      }
    }
    for (const auto& port : plan.switch_ports) {
      if (port.node == node) {
        addresses.push_back({{"ifname", port.ifname}, {"address", port.address}});
      }
    }
    nodes.push_back({{"node", node}, {"netns", ns}, {"exists", netns_exists(ns)}, {"interfaces", addresses}});
  }
  doc["nodes"] = nodes;
  if (scenario.has_fabric()) {
    doc["fabric"] = scenario.fabric.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(scenario.fabric);
    doc["switches"] = switches_json(plan);
  }
  std::map<std::string, std::map<std::string, double>> rates;  // link -> node -> rate
  if (netns_exists(plan.switch_netns)) {
    if (auto net = Network::attach(scenario, plan)) {
      if (auto samples = net->sample()) {
        for (const LinkSample& s : *samples) {
          if (s.stats.link_level) {
            rates[s.link][s.node] = s.stats.rate_bps;
          }
        }
      }
    }
  }
  auto links = nlohmann::ordered_json::array();
  for (const auto& l : plan.links) {
    auto ends = nlohmann::ordered_json::array();
    for (const InterfacePlan* end : {&l.from, &l.to}) {
      nlohmann::ordered_json e = {{"node", end->node}, {"ifname", end->ifname}, {"address", end->address}};
      auto it = rates[l.link].find(end->node);
      e["rate_bps"] = it == rates[l.link].end() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(it->second);
      ends.push_back(e);
    }
    links.push_back({{"link", l.link}, {"ends", ends}});
  }
  doc["links"] = links;
  return doc;
}

nlohmann::ordered_json run_status(const RunSurvey& s) {
  nlohmann::ordered_json doc = s.scenario ? run_status(s.run, *s.scenario) : degraded_status(s);
  doc["processes"] = processes_json(s.processes);
  return doc;
}

}  // namespace contend::emulator
