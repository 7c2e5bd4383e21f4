#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/units.h"
#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/net/htb_params.h"
#include "scenario/fabric_model.h"
#include "scenario/placement.h"
#include "scenario/timeline.h"

namespace contend::emulator {

const LinkSpec* Scenario::find_link(const std::string& link_name) const {
  for (const auto& l : links) {
    if (l.name == link_name) {
      return &l;
    }
  }
  return nullptr;
}

int Scenario::node_index(const std::string& node) const {
  const auto it = std::find(nodes.begin(), nodes.end(), node);
  return it == nodes.end() ? -1 : static_cast<int>(it - nodes.begin());
}

bool Scenario::is_switch(const std::string& who) const {
  return std::find(switches.begin(), switches.end(), who) != switches.end();
}

bool Scenario::needs_netem() const {
  return std::any_of(links.begin(), links.end(),
                     [](const LinkSpec& l) { return l.delay.count() > 0 || l.loss_fraction > 0; });
}

std::size_t Scenario::flow_events() const {
  return static_cast<std::size_t>(std::count_if(events.begin(), events.end(), [](const Event& e) {
    return std::holds_alternative<FlowStart>(e.action) || std::holds_alternative<FlowStop>(e.action);
  }));
}

std::string Scenario::closed_loop_flow() const {
  for (const Event& e : events) {
    const auto* start = std::get_if<FlowStart>(&e.action);
    if (start != nullptr && start->flow.iterate_bytes > 0) {
      return start->flow.name;
    }
  }
  return "";
}

bool Scenario::has_stalls() const {
  const auto stalls = [](const Event& e) {
    const auto* stall = std::get_if<SetStall>(&e.action);
    return stall != nullptr && stall->stall_s > 0;
  };
  return std::any_of(events.begin(), events.end(), stalls) ||
         std::any_of(iteration_events.begin(), iteration_events.end(), stalls);
}

namespace {

// Node and link names become parts of namespace and interface names: keep them short and plain.
bool plain_name(const std::string& s, std::size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// The index in `names` of the string at `key`; 0 (the default) when it is absent.
Result<std::size_t> parse_choice(const JsonReader& r, const std::string& key, const std::vector<std::string>& names) {
  auto text = r.optional_string(key);
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return std::size_t{0};
  }
  const auto it = std::find(names.begin(), names.end(), **text);
  if (it == names.end()) {
    return r.error_at(key, "expected " + detail::quoted(names) + ", got \"" + **text + "\"");
  }
  return static_cast<std::size_t>(it - names.begin());
}

Result<double> parse_loss(const JsonReader& r) {
  auto text = r.optional_string("loss");
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return 0.0;
  }
  const std::string& s = **text;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || std::string(end) != "%" || !(v >= 0 && v <= 100)) {
    return r.error_at("loss", "expected a percentage like \"0.1%\" between 0% and 100%, got \"" + s + "\"");
  }
  return v / 100.0;
}

// A link's name, the nodes it joins and its base rate.
Result<LinkSpec> parse_link_ends(const JsonReader& r, const Scenario& s) {
  auto name = r.string("name");
  auto from = r.string("from");
  auto to = r.string("to");
  auto rate = r.rate_bps("rate");
  if (auto e = first_error(name, from, to, rate)) {
    return *e;
  }
  LinkSpec l;
  l.name = *name;
  l.from = *from;
  l.to = *to;
  l.rate_bps = *rate;
  if (!plain_name(l.name, 32)) {
    return r.error_at("name", "expected 1-32 letters, digits, '-' or '_', got \"" + l.name + "\"");
  }
  for (const auto& [key, node] : {std::pair{"from", l.from}, std::pair{"to", l.to}}) {
    if (s.node_index(node) < 0 && !s.is_switch(node)) {
      return r.error_at(key, "unknown node \"" + node + "\"; nodes are listed in /nodes" +
                                 (s.has_fabric() ? ", switches in /switches" : ""));
    }
  }
  if (l.from == l.to) {
    return r.error_at("to", "a link joins two different nodes, got \"" + l.to + "\" twice");
  }
  if (l.rate_bps <= 0) {
    return r.error_at("rate", "expected a positive rate, got 0");
  }
  return l;
}

// "workload_share": a fraction strictly between 0 and 1, only with "split"; else the default.
Result<double> parse_workload_share(const JsonReader& r, Preemption preemption, double fallback) {
  auto share = r.optional_number("workload_share");
  if (!share) {
    return share.error();
  }
  if (!*share) {
    return fallback;
  }
  if (preemption != Preemption::kSplit) {
    return r.error_at("workload_share", "only meaningful with \"preemption\": \"split\"");
  }
  if (!(**share > 0 && **share < 1)) {
    return r.error_at("workload_share",
                      "expected a fraction between 0 and 1 (exclusive), got " + std::to_string(**share));
  }
  return **share;
}

// What the link's discipline cannot do, from its registry data: no classes to preempt, no netem,
// a rate above its highest. Each error names the disciplines that can.
Result<void> check_discipline(const JsonReader& r, const LinkSpec& l) {
  const DisciplineKind& d = find_discipline(l.qdisc)->kind;
  const auto use = [&](bool (*can)(const DisciplineKind&)) { return "; use " + detail::quoted(discipline_names(can)); };
  if (!d.preemption_classes && (r.has("preemption") || r.has("workload_share"))) {
    return r.error_at("qdisc", l.qdisc + " has no preemption classes for \"preemption\"" +
                                   use([](const DisciplineKind& x) { return x.preemption_classes; }));
  }
  if (!d.netem && (l.delay.count() > 0 || l.loss_fraction > 0)) {
    return r.error_at(
        "qdisc", l.qdisc + " takes no netem for delay and loss" + use([](const DisciplineKind& x) { return x.netem; }));
  }
  if (const std::string problem = rate_problem(l, l.rate_bps); !problem.empty()) {
    return r.error_at("rate", problem);
  }
  return {};
}

Result<LinkSpec> parse_link(const JsonReader& r, const Scenario& s) {
  if (auto ok = r.check_keys(
          {"name", "from", "to", "rate", "delay", "loss", "direction", "qdisc", "preemption", "workload_share"});
      !ok) {
    return ok.error();
  }
  auto link = parse_link_ends(r, s);
  if (!link) {
    return link.error();
  }
  LinkSpec& l = *link;
  auto delay = r.optional_duration("delay");
  auto loss = parse_loss(r);
  auto direction = parse_choice(r, "direction", {"both", "forward", "backward"});
  auto qdisc = parse_choice(r, "qdisc", discipline_names());
  auto preemption = parse_choice(r, "preemption", {kPreemptionNames.begin(), kPreemptionNames.end()});
  if (auto e = first_error(delay, loss, direction, qdisc, preemption)) {
    return *e;
  }
  l.delay = delay->value_or(std::chrono::nanoseconds(0));
  l.loss_fraction = *loss;
  l.direction = static_cast<Direction>(*direction);  // in the enum's order
  l.qdisc = r.has("qdisc") ? discipline_names()[*qdisc] : l.qdisc;
  l.preemption = static_cast<Preemption>(*preemption);
  auto share = parse_workload_share(r, l.preemption, l.workload_share);
  if (!share) {
    return share.error();
  }
  l.workload_share = *share;
  if (auto ok = check_discipline(r, l); !ok) {
    return ok.error();
  }
  return link;
}

// The top level's plain fields: name, description, duration and seed.
Result<Scenario> parse_header(const JsonReader& r, const std::string& source) {
  auto name = r.string("name");
  auto description = r.optional_string("description");
  auto duration = r.duration("duration");
  auto seed = r.optional_integer("seed");
  if (auto e = first_error(name, description, duration, seed)) {
    return *e;
  }
  Scenario s;
  s.source = source;
  s.name = *name;
  if (!plain_name(s.name, 64)) {
    return r.error_at("name", "expected 1-64 letters, digits, '-' or '_', got \"" + s.name + "\"");
  }
  s.description = description->value_or("");
  s.duration_s = to_seconds(*duration);
  if (s.duration_s <= 0) {
    return r.error_at("duration", "expected a positive duration");
  }
  s.seed = static_cast<std::uint64_t>(seed->value_or(1));
  return s;
}

// The member `key`, which must be there and be an array; `what` says what it holds.
Result<JsonReader> required_array(const JsonReader& r, const std::string& key, const std::string& what) {
  if (!r.has(key)) {
    return r.error_at(key, "missing; expected " + what);
  }
  const JsonReader a = r.at(key);
  if (auto ok = a.expect_array(); !ok) {
    return ok.error();
  }
  return a;
}

// The names in the array at `key` ("node" or "switch" names, `what`): plain, at most 8 characters
// (they end interface names), none listed twice nor among `taken`, from `least` to `most` of them.
Result<std::vector<std::string>> parse_names(const JsonReader& r, const std::string& key, const std::string& what,
                                             const std::vector<std::string>& taken, std::size_t least,
                                             std::size_t most) {
  auto names = required_array(r, key, "an array of " + what + " names like [\"n0\", \"n1\"]");
  if (!names) {
    return names.error();
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names->json().size(); ++i) {
    const auto& v = names->json()[i];
    if (!v.is_string() || !plain_name(v.get<std::string>(), 8)) {
      return names->at(i).error("expected a " + what + " name of 1-8 letters, digits, '-' or '_', got " +
                                quote_json(v));
    }
    const std::string name = v.get<std::string>();
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return names->at(i).error(what + " \"" + name + "\" is listed twice");
    }
    if (std::find(taken.begin(), taken.end(), name) != taken.end()) {
      return names->at(i).error(what + " \"" + name + "\" is a node's name already");
    }
    out.push_back(name);
  }
  if (out.size() < least || out.size() > most) {
    return names->error("expected " + std::to_string(least) + " to " + std::to_string(most) + " " + key + ", got " +
                        std::to_string(out.size()));
  }
  return out;
}

Result<std::vector<LinkSpec>> parse_links(const JsonReader& r, const Scenario& s) {
  auto links = required_array(r, "links", "an array of links");
  if (!links) {
    return links.error();
  }
  std::vector<LinkSpec> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < links->json().size(); ++i) {
    auto link = parse_link(links->at(i), s);
    if (!link) {
      return link.error();
    }
    if (!names.insert(link->name).second) {
      return links->at(i).error_at("name", "link \"" + link->name + "\" is defined twice");
    }
    out.push_back(std::move(*link));
  }
  if (out.empty()) {
    return links->error("expected at least one link");
  }
  return out;
}

// The hosts, switches and links: generated by "fabric", or written out (switches optional).
Result<void> parse_network(const JsonReader& r, Scenario& s) {
  if (r.has("fabric")) {
    return detail::parse_fabric(r, s);
  }
  auto nodes = parse_names(r, "nodes", "node", {}, 2, kMaxHosts);
  if (!nodes) {
    return nodes.error();
  }
  s.nodes = std::move(*nodes);
  if (r.has("switches")) {
    auto switches = parse_names(r, "switches", "switch", s.nodes, 1, kMaxSwitches);
    if (!switches) {
      return switches.error();
    }
    s.switches = std::move(*switches);
  }
  auto links = parse_links(r, s);
  if (!links) {
    return links.error();
  }
  s.links = std::move(*links);
  return s.has_fabric() ? detail::check_fabric(r, s) : Result<void>{};
}

// The timeline's events, expanded and sorted by time (stable: equal times keep file order).
Result<std::vector<Event>> parse_events(const JsonReader& r, const Scenario& s, const FileReader& read) {
  std::vector<Event> events;
  if (!r.has("timeline")) {
    return events;
  }
  const std::size_t slash = s.source.find_last_of('/');
  detail::EventBudget budget;
  const detail::TimelineContext ctx{s, read, slash == std::string::npos ? "." : s.source.substr(0, slash), budget};
  if (auto ok = detail::expand_timeline(r.at("timeline"), 0.0, ctx, events); !ok) {
    return ok.error();
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at_s < b.at_s; });
  return events;
}

// Moves the stalls indexed by iteration out of `s.events` (no clock plays them), by iteration.
void split_iteration_events(Scenario& s) {
  const auto by_iteration = [](const Event& e) { return iteration_of(e) >= 0; };
  std::copy_if(s.events.begin(), s.events.end(), std::back_inserter(s.iteration_events), by_iteration);
  s.events.erase(std::remove_if(s.events.begin(), s.events.end(), by_iteration), s.events.end());
  std::stable_sort(s.iteration_events.begin(), s.iteration_events.end(),
                   [](const Event& a, const Event& b) { return iteration_of(a) < iteration_of(b); });
}

}  // namespace

Result<Scenario> parse_scenario(const std::string& text, const std::string& source, const FileReader& read) {
  auto json = parse_document(
      text, source, "scenario", 1,
      {"name", "description", "duration", "seed", "nodes", "switches", "links", "fabric", "placement", "timeline"});
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  auto s = parse_header(r, source);
  if (!s) {
    return s.error();
  }
  // Each part reads the parts before it: links name nodes, the timeline names both.
  if (auto ok = parse_network(r, *s); !ok) {
    return ok.error();
  }
  auto events = parse_events(r, *s, read);
  if (!events) {
    return events.error();
  }
  s->events = std::move(*events);
  split_iteration_events(*s);
  if (auto ok = detail::parse_placement(r, *s); !ok) {  // a rule leaves the flows' hosts out
    return ok.error();
  }
  return s;
}

Result<Scenario> load_scenario(const std::string& path) {
  auto text = read_json_text(path, "a scenario file");
  if (!text) {
    return text.error();
  }
  return parse_scenario(*text, path, [](const std::string& p) { return read_file(p); });
}

}  // namespace contend::emulator
