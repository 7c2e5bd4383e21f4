#include "scenario/fabric_model.h"

#include <algorithm>
#include <deque>

#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/net/htb_params.h"
#include "contend/emulator/scenario/fabric_registry.h"
#include "scenario/timeline.h"

namespace contend::emulator {

std::map<std::string, int> hops_from(const Scenario& s, const std::string& start, const std::set<std::string>& down) {
  std::map<std::string, std::vector<const std::string*>> next;
  for (const LinkSpec& l : s.links) {
    if (down.count(l.name) != 0) {
      continue;
    }
    next[l.from].push_back(&l.to);
    next[l.to].push_back(&l.from);
  }
  std::map<std::string, int> hops{{start, 0}};
  std::deque<std::string> queue{start};
  while (!queue.empty()) {
    const std::string at = queue.front();
    queue.pop_front();
    for (const std::string* n : next[at]) {
      if (hops.emplace(*n, hops[at] + 1).second && s.is_switch(*n)) {
        queue.push_back(*n);  // only switches forward
      }
    }
  }
  return hops;
}

namespace detail {

namespace {
// Every port's discipline: the kind's parameter "qdisc", a link's default without it.
Result<std::string> port_qdisc(const JsonReader& params) {
  auto text = params.optional_string("qdisc");
  if (!text) {
    return text.error();
  }
  const std::vector<std::string> names = discipline_names();
  if (*text && std::find(names.begin(), names.end(), **text) == names.end()) {
    return params.error_at("qdisc", "expected " + quoted(names) + ", got \"" + **text + "\"");
  }
  return text->value_or(LinkSpec{}.qdisc);
}
}  // namespace

Result<void> parse_fabric(const JsonReader& r, Scenario& s) {
  for (const char* written : {"nodes", "switches", "links"}) {
    if (r.has(written)) {
      return r.error_at(written, "written by /fabric; leave it out, or write the network out without /fabric");
    }
  }
  const JsonReader f = r.at("fabric");
  if (auto ok = f.expect_object(); !ok) {
    return ok;
  }
  if (f.json().size() != 1) {
    return f.error("expected one fabric, {\"<kind>\": {parameters}}, with a kind from " +
                   quoted(fabric_kinds().names()));
  }
  const std::string kind = f.json().begin().key();
  const auto* item = fabric_kinds().find(kind);
  if (item == nullptr) {
    return f.error("unknown fabric \"" + kind + "\"; expected one of " + quoted(fabric_kinds().names()));
  }
  const JsonReader given = f.at(kind);
  if (auto ok = given.expect_object(); !ok) {
    return ok;
  }
  auto qdisc = port_qdisc(given);
  if (!qdisc) {
    return qdisc.error();
  }
  nlohmann::json rest = given.json();
  rest.erase("qdisc");
  const JsonReader params(rest, given.source(), given.path());
  auto model = item->kind.expand(params);
  if (!model) {
    return model.error();
  }
  for (LinkSpec& l : model->links) {
    l.qdisc = *qdisc;
    if (const std::string problem = rate_problem(l, l.rate_bps); !problem.empty()) {
      return params.error("link " + l.name + ": " + problem);
    }
  }
  s.nodes = std::move(model->hosts);
  s.switches = std::move(model->switches);
  s.links = std::move(model->links);
  s.fabric = kind;
  return {};
}

Result<void> check_fabric(const JsonReader& r, const Scenario& s) {
  for (std::size_t i = 0; i < s.switches.size(); ++i) {
    const std::string& sw = s.switches[i];
    if (std::none_of(s.links.begin(), s.links.end(), [&](const LinkSpec& l) { return l.from == sw || l.to == sw; })) {
      return r.at("switches").at(i).error("switch \"" + sw + "\" has no links");
    }
  }
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const auto hops = hops_from(s, s.nodes[i]);
    for (const std::string& other : s.nodes) {
      if (hops.count(other) == 0) {
        return r.at("nodes").at(i).error("host \"" + s.nodes[i] + "\" cannot reach host \"" + other +
                                         "\": no path through switches joins them (hosts do not forward)");
      }
    }
  }
  return {};
}

}  // namespace detail
}  // namespace contend::emulator
