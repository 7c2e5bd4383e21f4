#include <algorithm>
#include <set>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/units.h"
#include "timeline.h"

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

bool Scenario::needs_netem() const {
  return std::any_of(links.begin(), links.end(),
                     [](const LinkSpec& l) { return l.delay.count() > 0 || l.loss_fraction > 0; });
}

std::size_t Scenario::flow_events() const {
  return static_cast<std::size_t>(
      std::count_if(events.begin(), events.end(), [](const Event& e) { return e.kind != Event::Kind::kSetRate; }));
}

namespace {

// Node and link names become parts of namespace and interface names: keep them short and plain.
bool plain_name(const std::string& s, std::size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
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

Result<LinkSpec> parse_link(const JsonReader& r, const Scenario& s) {
  if (auto ok = r.check_keys(
          {"name", "from", "to", "rate", "delay", "loss", "direction", "qdisc", "preemption", "workload_share"});
      !ok) {
    return ok.error();
  }
  LinkSpec l;
  auto name = r.string("name");
  auto from = r.string("from");
  auto to = r.string("to");
  auto rate = r.rate_bps("rate");
  if (auto e = first_error(name, from, to, rate)) {
    return *e;
  }
  l.name = *name;
  l.from = *from;
  l.to = *to;
  l.rate_bps = *rate;
  if (!plain_name(l.name, 32)) {
    return r.error_at("name", "expected 1-32 letters, digits, '-' or '_', got \"" + l.name + "\"");
  }
  for (const auto& [key, node] : {std::pair{"from", l.from}, std::pair{"to", l.to}}) {
    if (s.node_index(node) < 0) {
      return r.error_at(key, "unknown node \"" + node + "\"; nodes are listed in /nodes");
    }
  }
  if (l.from == l.to) {
    return r.error_at("to", "a link joins two different nodes, got \"" + l.to + "\" twice");
  }
  if (l.rate_bps <= 0) {
    return r.error_at("rate", "expected a positive rate, got 0");
  }
  auto delay = r.optional_duration("delay");
  if (!delay) {
    return delay.error();
  }
  l.delay = delay->value_or(std::chrono::nanoseconds(0));
  auto loss = parse_loss(r);
  if (!loss) {
    return loss.error();
  }
  l.loss_fraction = *loss;
  auto direction = r.optional_string("direction");
  auto qdisc = r.optional_string("qdisc");
  auto preemption = r.optional_string("preemption");
  auto share = r.optional_number("workload_share");
  if (auto e = first_error(direction, qdisc, preemption, share)) {
    return *e;
  }
  const std::string d = direction->value_or("both");
  if (d == "both") {
    l.direction = Direction::kBoth;
  } else if (d == "forward") {
    l.direction = Direction::kForward;
  } else if (d == "backward") {
    l.direction = Direction::kBackward;
  } else {
    return r.error_at("direction", "expected \"both\", \"forward\" or \"backward\", got \"" + d + "\"");
  }
  const std::string q = qdisc->value_or("htb");
  if (q == "htb") {
    l.qdisc = QdiscKind::kHtb;
  } else if (q == "tbf") {
    l.qdisc = QdiscKind::kTbf;
  } else {
    return r.error_at("qdisc", "expected \"htb\" or \"tbf\", got \"" + q + "\"");
  }
  const std::string p = preemption->value_or("background-first");
  if (p == "background-first") {
    l.preemption = Preemption::kBackgroundFirst;
  } else if (p == "fair") {
    l.preemption = Preemption::kFair;
  } else if (p == "split") {
    l.preemption = Preemption::kSplit;
  } else {
    return r.error_at("preemption", "expected \"background-first\", \"fair\" or \"split\", got \"" + p + "\"");
  }
  if (*share) {
    if (l.preemption != Preemption::kSplit) {
      return r.error_at("workload_share", "only meaningful with \"preemption\": \"split\"");
    }
    if (!(**share > 0 && **share < 1)) {
      return r.error_at("workload_share",
                        "expected a fraction between 0 and 1 (exclusive), got " + std::to_string(**share));
    }
    l.workload_share = **share;
  }
  if (l.qdisc == QdiscKind::kTbf && (r.has("preemption") || r.has("workload_share"))) {
    return r.error_at("qdisc", "tbf has a single bucket: preemption classes need \"htb\"");
  }
  if (l.qdisc == QdiscKind::kTbf && (l.delay.count() > 0 || l.loss_fraction > 0)) {
    return r.error_at("qdisc", "delay and loss hang netem under the htb classes; use \"htb\"");
  }
  if (l.qdisc == QdiscKind::kTbf && l.rate_bps > 17e9) {
    return r.error_at("rate", "tbf's rate stops at 17Gbit (32-bit bytes per second in libnl); use htb");
  }
  return l;
}

}  // namespace

Result<Scenario> parse_scenario(const std::string& text, const std::string& source, const FileReader& read) {
  auto json = parse_json(text, source);
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, source);
  if (auto ok = r.check_keys({"schema", "name", "description", "duration", "seed", "nodes", "links", "timeline"});
      !ok) {
    return ok.error();
  }
  if (auto ok = r.expect_schema("scenario", 1); !ok) {
    return ok.error();
  }
  Scenario s;
  s.source = source;
  auto name = r.string("name");
  auto description = r.optional_string("description");
  auto duration = r.duration("duration");
  auto seed = r.optional_integer("seed");
  if (auto e = first_error(name, description, duration, seed)) {
    return *e;
  }
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
  if (!r.has("nodes")) {
    return r.error_at("nodes", "missing; expected an array of node names like [\"n0\", \"n1\"]");
  }
  const JsonReader nodes = r.at("nodes");
  if (auto ok = nodes.expect_array(); !ok) {
    return ok.error();
  }
  for (std::size_t i = 0; i < nodes.json().size(); ++i) {
    const auto& v = nodes.json()[i];
    if (!v.is_string() || !plain_name(v.get<std::string>(), 8)) {
      return nodes.at(i).error("expected a node name of 1-8 letters, digits, '-' or '_', got " + v.dump());
    }
    if (s.node_index(v.get<std::string>()) >= 0) {
      return nodes.at(i).error("node \"" + v.get<std::string>() + "\" is listed twice");
    }
    s.nodes.push_back(v.get<std::string>());
  }
  if (s.nodes.size() < 2 || s.nodes.size() > 250) {
    return nodes.error("expected 2 to 250 nodes, got " + std::to_string(s.nodes.size()));
  }
  if (!r.has("links")) {
    return r.error_at("links", "missing; expected an array of links");
  }
  const JsonReader links = r.at("links");
  if (auto ok = links.expect_array(); !ok) {
    return ok.error();
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < links.json().size(); ++i) {
    auto link = parse_link(links.at(i), s);
    if (!link) {
      return link.error();
    }
    if (!names.insert(link->name).second) {
      return links.at(i).error_at("name", "link \"" + link->name + "\" is defined twice");
    }
    s.links.push_back(std::move(*link));
  }
  if (s.links.empty()) {
    return links.error("expected at least one link");
  }
  if (r.has("timeline")) {
    const std::size_t slash = source.find_last_of('/');
    const detail::TimelineContext ctx{s, read, slash == std::string::npos ? "." : source.substr(0, slash)};
    std::vector<Event> events;
    if (auto ok = detail::expand_timeline(r.at("timeline"), 0.0, ctx, events); !ok) {
      return ok.error();
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at_s < b.at_s; });
    s.events = std::move(events);
  }
  return s;
}

Result<Scenario> load_scenario(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    return text.error();
  }
  return parse_scenario(*text, path, [](const std::string& p) { return read_file(p); });
}

}  // namespace contend::emulator
