#include "scenario/placement.h"

#include <algorithm>
#include <random>

#include "scenario/timeline.h"

namespace contend::emulator::detail {
namespace {

const std::vector<std::string> kRules = {"pack", "spread", "random"};

// The hosts no flow of `events` starts or ends on, in file order: a rule places ranks on them (a
// flow's host is another tenant's).
std::vector<std::string> free_hosts(const Scenario& s, const std::vector<Event>& events) {
  const std::map<std::string, const Event*> taken = flow_ends(events);
  std::vector<std::string> out;
  std::copy_if(s.nodes.begin(), s.nodes.end(), std::back_inserter(out),
               [&](const std::string& h) { return taken.count(h) == 0; });
  return out;
}

}  // namespace

// pack: the leaves with most free hosts first (a job fits in as few as it can); spread: one host
// from each leaf in turn; random: shuffled by the seed (the same order on every machine:
// Fisher-Yates over mt19937_64's own sequence).
std::vector<std::string> hosts_by_rule(const Scenario& s, const std::vector<Event>& events, const PlacementRule& rule) {
  const std::vector<std::string> hosts = free_hosts(s, events);
  std::vector<std::vector<std::string>> leaves = hosts_by_leaf(s, hosts);
  std::vector<std::string> out;
  if (rule.name == "pack") {
    std::stable_sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& leaf : leaves) {
      out.insert(out.end(), leaf.begin(), leaf.end());
    }
  } else if (rule.name == "spread") {
    for (std::size_t i = 0; out.size() < hosts.size(); ++i) {
      for (const auto& leaf : leaves) {
        if (i < leaf.size()) {
          out.push_back(leaf[i]);
        }
      }
    }
  } else {
    out = hosts;
    std::mt19937_64 rng(rule.seed);
    for (std::size_t i = out.size(); i > 1; --i) {
      std::swap(out[i - 1], out[rng() % i]);
    }
  }
  return out;
}

Result<std::vector<std::string>> listed_hosts(const JsonReader& list, const Scenario& s, const std::string& what) {
  if (auto ok = list.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.json().size(); ++i) {
    const JsonReader item = list.at(i);
    const std::string name = item.json().is_string() ? item.json().get<std::string>() : "";
    if (s.is_switch(name)) {
      return item.error("\"" + name + "\" is a switch; " + what + " run on hosts");
    }
    if (s.node_index(name) < 0) {
      return item.error("expected a host of the fabric, got " + quote_json(item.json()));
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return item.error("host \"" + name + "\" is placed twice (" + what + " take a host each)");
    }
    out.push_back(name);
  }
  if (out.empty()) {
    return list.error("expected at least one host");
  }
  return out;
}

Result<PlacementRule> parse_placement_rule(const JsonReader& p, std::uint64_t seed) {
  std::string rule;
  if (p.json().is_string()) {
    rule = p.json().get<std::string>();
  } else {
    if (auto ok = p.check_keys({"rule", "seed"}); !ok) {
      return ok.error();
    }
    auto name = p.string("rule");
    auto given = p.optional_integer("seed");
    if (auto err = first_error(name, given)) {
      return *err;
    }
    rule = *name;
    if (given->has_value() && **given < 0) {
      return p.error_at("seed", "expected a seed >= 0");
    }
    seed = given->has_value() ? static_cast<std::uint64_t>(**given) : seed;
  }
  if (std::find(kRules.begin(), kRules.end(), rule) == kRules.end()) {
    return p.error("unknown placement rule \"" + rule + "\"; expected a list of hosts or one of " + quoted(kRules));
  }
  return PlacementRule{rule, seed};
}

namespace {

// The hosts a rule ("pack", or {"rule": "random", "seed": 7}) places ranks on.
Result<std::vector<std::string>> ruled(const JsonReader& p, const Scenario& s) {
  auto rule = parse_placement_rule(p, s.seed);
  if (!rule) {
    return rule.error();
  }
  auto out = hosts_by_rule(s, s.events, *rule);
  if (out.empty()) {
    return p.error("no host is free to place ranks on: background flows use every one");
  }
  return out;
}

}  // namespace

Result<void> parse_placement(const JsonReader& r, Scenario& s) {
  if (!r.has("placement")) {
    s.placed = s.has_fabric() ? s.nodes.size() : 0;
    return {};
  }
  const JsonReader p = r.at("placement");
  if (!s.has_fabric()) {
    return p.error("placement is for fabrics (scenarios with switches); on links alone rank r runs on node r");
  }
  if (!p.json().is_array() && !p.json().is_string() && !p.json().is_object()) {
    return p.error("expected a list of hosts, a rule (" + quoted(kRules) + ") or {\"rule\": ..., \"seed\": N}");
  }
  auto placed = p.json().is_array() ? listed_hosts(p, s, "ranks") : ruled(p, s);
  if (!placed) {
    return placed.error();
  }
  std::vector<std::string> order = *placed;
  std::copy_if(s.nodes.begin(), s.nodes.end(), std::back_inserter(order),
               [&](const std::string& h) { return std::find(placed->begin(), placed->end(), h) == placed->end(); });
  s.nodes = std::move(order);
  s.placed = placed->size();
  return {};
}

}  // namespace contend::emulator::detail

namespace contend::emulator {

std::string leaf_of(const Scenario& s, const std::string& host) {
  for (const LinkSpec& l : s.links) {
    if ((l.from == host && s.is_switch(l.to)) || (l.to == host && s.is_switch(l.from))) {
      return l.from == host ? l.to : l.from;
    }
  }
  return "";
}

std::vector<std::vector<std::string>> hosts_by_leaf(const Scenario& s, const std::vector<std::string>& hosts) {
  std::vector<std::string> leaves;
  std::vector<std::vector<std::string>> out;
  for (const std::string& h : hosts) {
    const std::string leaf = leaf_of(s, h);
    const auto it = std::find(leaves.begin(), leaves.end(), leaf);
    if (it == leaves.end()) {
      leaves.push_back(leaf);
      out.push_back({h});
    } else {
      out[static_cast<std::size_t>(it - leaves.begin())].push_back(h);
    }
  }
  return out;
}

std::map<std::string, const Event*> flow_ends(const std::vector<Event>& events) {
  std::map<std::string, const Event*> out;
  for (const Event& e : events) {
    if (const auto* start = std::get_if<FlowStart>(&e.action)) {
      out.try_emplace(start->flow.from, &e);
      out.try_emplace(start->flow.to, &e);
    }
  }
  return out;
}

}  // namespace contend::emulator
