#include "scenario/timeline.h"

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

std::string quoted(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + "\"" + names[i] + "\"";
  }
  return out;
}

namespace {

// The links an entry names: one, or every link for "*"; empty when it names none.
Result<std::vector<const LinkSpec*>> named_links(const JsonReader& r, const Scenario& scenario) {
  std::vector<const LinkSpec*> out;
  auto link = r.optional_string("link");
  if (!link) {
    return link.error();
  }
  if (!*link) {
    return out;
  }
  if (**link == "*") {
    for (const auto& l : scenario.links) {
      out.push_back(&l);
    }
    return out;
  }
  const LinkSpec* l = scenario.find_link(**link);
  if (l == nullptr) {
    return r.error_at("link", "unknown link \"" + **link + "\"; use a name from /links or \"*\" for all");
  }
  out.push_back(l);
  return out;
}

// One entry: {"at", "link"?, and exactly one registered kind}, expanded by that kind's pattern.
Result<void> expand_entry(const JsonReader& r, double offset_s, const TimelineContext& ctx, std::vector<Event>& out) {
  std::vector<std::string> keys = {"at", "link"};
  const PatternItem* pattern = nullptr;
  int kinds = 0;
  for (const PatternItem& e : timeline_patterns().items()) {
    keys.push_back(e.entry.name);
    if (r.has(e.entry.name)) {
      pattern = &e;
      ++kinds;
    }
  }
  if (auto ok = r.check_keys(keys); !ok) {
    return ok;
  }
  auto at = r.duration("at");
  if (!at) {
    return at.error();
  }
  if (kinds != 1) {
    return r.error("expected exactly one of " + quoted(timeline_patterns().names()) + ", got " + std::to_string(kinds));
  }
  auto links = named_links(r, ctx.scenario);
  if (!links) {
    return links.error();
  }
  PatternCall call(r, pattern->entry.name, offset_s + to_seconds(*at), std::move(*links), ctx, out);
  return pattern->kind.expand(call);
}

}  // namespace

Result<void> EventBudget::expect(const JsonReader& where, double count) const {
  if (!(static_cast<double>(used_) + count <= static_cast<double>(kMaxScenarioEvents))) {
    return where.error("expands to more than " + std::to_string(kMaxScenarioEvents) +
                       " events (rate changes, flow starts and stops; each loop pass counts as one), the most a "
                       "scenario may hold");
  }
  return {};
}

Result<void> EventBudget::take(const JsonReader& where, std::size_t count) {
  if (auto ok = expect(where, static_cast<double>(count)); !ok) {
    return ok;
  }
  used_ += count;
  return {};
}

Result<void> check_min_period(const JsonReader& p, const std::string& key, double seconds) {
  if (!(seconds >= to_seconds(kMinPatternPeriod))) {
    return p.error_at(key,
                      "expected at least " + format_duration(kMinPatternPeriod) + ", got " + format_seconds(seconds));
  }
  return {};
}

namespace {

// A flow's "rate": 0 for "unlimited", else a rate within what contend shapes.
Result<double> flow_rate(const JsonReader& r, const std::string& text) {
  if (text == "unlimited") {
    return 0.0;
  }
  auto bps = parse_rate_bps(text);
  if (!bps || !(*bps >= kMinFlowRateBps && *bps <= kMaxFlowRateBps)) {
    return r.error_at("rate", "expected \"unlimited\" or a positive rate like \"500Mbit\" from " +
                                  format_rate(kMinFlowRateBps) + " to " + format_rate(kMaxFlowRateBps) + ", got \"" +
                                  text + "\"");
  }
  return *bps;
}

// A flow's "iterate": {"bytes": "8MiB", "compute": "50ms"}, a closed-loop job's iterations.
Result<void> parse_iterate(const JsonReader& r, FlowSpec& f) {
  if (!r.has("iterate")) {
    return {};
  }
  const JsonReader it = r.at("iterate");
  auto keys = it.check_keys({"bytes", "compute", "period"});
  auto bytes = it.optional_size_bytes("bytes");
  auto compute = it.optional_duration("compute");
  auto period = it.optional_duration("period");
  if (auto e = first_error(keys, bytes, compute, period)) {
    return *e;
  }
  if (!bytes->has_value()) {
    return it.error("expected \"bytes\": what each flow sends per iteration, like \"8MiB\"");
  }
  if (**bytes < 1 || **bytes > kMaxIterateBytes) {
    return it.error_at("bytes", "expected 1B to " + format_size(kMaxIterateBytes) + " per flow and iteration");
  }
  f.iterate_bytes = **bytes;
  f.iterate_compute_s = compute->has_value() ? to_seconds(**compute) : 0.0;
  if (f.iterate_compute_s < 0 || f.iterate_compute_s > 3600) {
    return it.error_at("compute", "expected 0s to 1h of computation per iteration");
  }
  f.iterate_period_s = period->has_value() ? to_seconds(**period) : 0.0;
  if (period->has_value() && (f.iterate_period_s < 1e-3 || f.iterate_period_s > 3600)) {
    return it.error_at("period", "expected 1ms to 1h between the job's slots");
  }
  if (f.protocol != Protocol::kTcp) {
    return r.error_at("iterate",
                      "a closed-loop flow is TCP: its iteration ends when every byte arrived, and "
                      "UDP may lose some");
  }
  return {};
}

}  // namespace

const std::vector<std::string> kFlowOptionKeys = {"protocol",   "streams",      "rate",
                                                  "congestion", "message_size", "iterate"};

Result<void> parse_flow_options(const JsonReader& r, FlowSpec& f) {
  auto protocol = r.optional_string("protocol");
  auto streams = r.optional_integer("streams");
  auto rate = r.optional_string("rate");
  auto congestion = r.optional_string("congestion");
  auto message = r.optional_size_bytes("message_size");
  if (auto e = first_error(protocol, streams, rate, congestion, message)) {
    return *e;
  }
  const std::string proto = protocol->value_or("tcp");
  if (proto != "tcp" && proto != "udp") {
    return r.error_at("protocol", "expected \"tcp\" or \"udp\", got \"" + proto + "\"");
  }
  f.protocol = proto == "tcp" ? Protocol::kTcp : Protocol::kUdp;
  f.streams = static_cast<int>(streams->value_or(1));
  if (f.streams < 1 || f.streams > 128) {
    return r.error_at("streams", "expected 1 to 128 streams");
  }
  auto bps = flow_rate(r, rate->value_or("unlimited"));
  if (!bps) {
    return bps.error();
  }
  f.rate_bps = *bps;
  if (f.protocol == Protocol::kUdp && f.rate_bps == 0) {
    return r.error_at("rate", "a UDP flow needs a rate (UDP has no congestion control to stop it)");
  }
  f.congestion = congestion->value_or("cubic");
  f.message_bytes = message->value_or(kDefaultMessageBytes);
  if (f.message_bytes < 1 || f.message_bytes > kMaxMessageBytes) {
    return r.error_at("message_size", "expected 1B to " + format_size(kMaxMessageBytes) + " (bytes per write), got " +
                                          format_size(f.message_bytes));
  }
  return parse_iterate(r, f);
}

Result<FlowSpec> parse_flow(const JsonReader& r, const Scenario& scenario) {
  std::vector<std::string> keys = {"name", "from", "to", "duration"};
  keys.insert(keys.end(), kFlowOptionKeys.begin(), kFlowOptionKeys.end());
  if (auto ok = r.check_keys(keys); !ok) {
    return ok.error();
  }
  FlowSpec f;
  auto name = r.optional_string("name");
  auto from = r.string("from");
  auto to = r.string("to");
  if (auto e = first_error(name, from, to)) {
    return *e;
  }
  f.from = *from;
  f.to = *to;
  for (const auto& [key, node] : {std::pair{"from", f.from}, std::pair{"to", f.to}}) {
    if (scenario.is_switch(node)) {
      return r.error_at(key, "\"" + node + "\" is a switch; a flow runs between hosts (/nodes)");
    }
    if (scenario.node_index(node) < 0) {
      return r.error_at(key, "unknown node \"" + node + "\"; nodes are listed in /nodes");
    }
  }
  if (f.from == f.to) {
    return r.error_at("to", "a flow goes between two different nodes");
  }
  f.name = name->value_or(f.from + "-" + f.to);
  if (auto ok = parse_flow_options(r, f); !ok) {
    return ok.error();
  }
  f.job = f.name;  // a closed-loop flow is a job of its own
  return f;
}

Result<void> expand_timeline(const JsonReader& timeline, double offset_s, const TimelineContext& ctx,
                             std::vector<Event>& out) {
  if (auto ok = timeline.expect_array(); !ok) {
    return ok;
  }
  for (std::size_t i = 0; i < timeline.json().size(); ++i) {
    if (auto ok = expand_entry(timeline.at(i), offset_s, ctx, out); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace contend::emulator::detail
