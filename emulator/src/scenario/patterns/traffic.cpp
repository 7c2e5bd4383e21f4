// {"at": "0s", "traffic": {"name": "dp", "pattern": "ring", "hosts": 4, "placement": "spread",
// "rate": "unlimited", "duration": "10s"}}: another tenant's traffic, a flow between every pair of
// hosts its pattern (scenario/traffic/) joins, on hosts a list names or a rule places among those
// no earlier flow uses (scenario/placement.h), so the ranks' own placement leaves them out.

#include "contend/common/units.h"
#include "contend/emulator/scenario/traffic_registry.h"
#include "scenario/patterns/pattern.h"
#include "scenario/placement.h"

namespace contend::emulator::detail {
namespace {

// The first `n` hosts `rule` (default "pack") places among those no earlier flow uses.
Result<std::vector<std::string>> placed_traffic_hosts(PatternCall& call, const JsonReader& body, long long n) {
  const Scenario& s = call.scenario();
  if (!s.has_fabric()) {
    return body.error_at("hosts",
                         "a count of hosts is placed on a fabric (scenarios with switches); on links "
                         "alone name the nodes: \"hosts\": [\"n0\", \"n1\"]");
  }
  PlacementRule rule{"pack", s.seed};
  if (body.has("placement")) {
    auto given = parse_placement_rule(body.at("placement"), s.seed);
    if (!given) {
      return given.error();
    }
    rule = *given;
  }
  std::vector<std::string> hosts = hosts_by_rule(s, call.events(), rule);
  if (static_cast<long long>(hosts.size()) < n) {
    return body.error_at("hosts", "the pattern needs " + std::to_string(n) + " hosts; " + std::to_string(hosts.size()) +
                                      " are free of earlier flows");
  }
  hosts.resize(static_cast<std::size_t>(n));
  return hosts;
}

// The hosts of "hosts": a list, or a count placed by "placement".
Result<std::vector<std::string>> traffic_hosts(PatternCall& call, const JsonReader& body) {
  if (!body.has("hosts")) {
    return body.error("expected \"hosts\": a list of hosts or how many to place");
  }
  const JsonReader hosts = body.at("hosts");
  if (hosts.json().is_array()) {
    if (body.has("placement")) {
      return body.error_at("placement", "the hosts are listed; a placement rule places a count of them");
    }
    return listed_hosts(hosts, call.scenario(), "a pattern's flows");
  }
  auto n = body.integer("hosts");
  if (!n) {
    return body.error_at("hosts", "expected a list of hosts or how many to place");
  }
  if (*n < 2 || *n > static_cast<long long>(call.scenario().nodes.size())) {
    return body.error_at("hosts", "expected 2 to " + std::to_string(call.scenario().nodes.size()) +
                                      " hosts (the scenario's), got " + std::to_string(*n));
  }
  return placed_traffic_hosts(call, body, *n);
}

// The shape "pattern" names, and whether `hosts` hosts suit it.
Result<const TrafficItem*> traffic_shape(const JsonReader& body, std::size_t hosts) {
  auto name = body.string("pattern");
  if (!name) {
    return name.error();
  }
  const TrafficItem* shape = traffic_patterns().find(*name);
  if (shape == nullptr) {
    return body.error_at("pattern",
                         "unknown traffic pattern \"" + *name + "\"; expected " + quoted(traffic_patterns().names()));
  }
  const auto n = static_cast<int>(hosts);
  if (n < shape->kind.min_hosts || (shape->kind.even_hosts && n % 2 != 0)) {
    return body.error_at("hosts", "\"" + *name + "\" takes " + (shape->kind.even_hosts ? "an even number of " : "") +
                                      "at least " + std::to_string(shape->kind.min_hosts) + " hosts, got " +
                                      std::to_string(n));
  }
  return shape;
}

// Everything but the hosts: the flows' options, the name their names begin with, the duration.
struct TrafficFlows {
  FlowSpec options;
  std::string name;
  std::optional<double> duration_s;
};

Result<TrafficFlows> traffic_options(const JsonReader& body) {
  std::vector<std::string> keys = {"name", "pattern", "hosts", "placement", "duration"};
  keys.insert(keys.end(), kFlowOptionKeys.begin(), kFlowOptionKeys.end());
  if (auto ok = body.check_keys(keys); !ok) {
    return ok.error();
  }
  TrafficFlows out;
  auto name = body.optional_string("name");
  auto pattern = body.string("pattern");
  auto duration = body.optional_duration("duration");
  if (auto e = first_error(name, pattern, duration)) {
    return *e;
  }
  out.name = name->value_or(*pattern);
  if (*duration) {
    out.duration_s = to_seconds(**duration);
  }
  if (auto ok = parse_flow_options(body, out.options); !ok) {
    return ok.error();
  }
  return out;
}

Result<void> expand_traffic(PatternCall& call) {
  if (auto ok = call.no_link("a pattern's flows run between hosts"); !ok) {
    return ok;
  }
  const JsonReader body = call.body();
  if (auto ok = body.expect_object(); !ok) {
    return ok;
  }
  auto options = traffic_options(body);
  if (!options) {
    return options.error();
  }
  for (const Event& e : call.events()) {  // a closed-loop job's flows wait on each other: one name, one job
    const auto* start = std::get_if<FlowStart>(&e.action);
    const bool closed = options->options.iterate_bytes > 0 || (start != nullptr && start->flow.iterate_bytes > 0);
    if (start != nullptr && start->flow.job == options->name && closed) {
      return body.error_at("name", "a tenant named \"" + options->name + "\" runs already; name each one apart");
    }
  }
  auto hosts = traffic_hosts(call, body);
  if (!hosts) {
    return hosts.error();
  }
  auto shape = traffic_shape(body, hosts->size());
  if (!shape) {
    return shape.error();
  }
  const auto flows = (*shape)->kind.flows(static_cast<int>(hosts->size()));
  if (auto ok = call.expect_events(body, 2.0 * static_cast<double>(flows.size())); !ok) {
    return ok;
  }
  for (const auto& [from, to] : flows) {
    FlowSpec f = options->options;
    f.from = (*hosts)[static_cast<std::size_t>(from)];
    f.to = (*hosts)[static_cast<std::size_t>(to)];
    f.name = options->name + ":" + f.from + "-" + f.to;
    f.job = options->name;  // closed loop: an iteration ends when all of the pattern's flows delivered
    f.job_flows = static_cast<int>(flows.size());
    if (auto ok = call.add_flow(call.entry(), call.at_s(), f, options->duration_s); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace

PatternItem traffic_pattern() {
  return {{"", "traffic", "another tenant's flows in a pattern among hosts listed or placed by a rule", {}},
          PatternKind{expand_traffic}};
}

}  // namespace contend::emulator::detail
