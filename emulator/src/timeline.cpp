#include "timeline.h"

#include <cmath>
#include <random>

#include "contend/common/units.h"
#include "contend/emulator/discipline_registry.h"
#include "contend/emulator/mahimahi.h"

namespace contend::emulator::detail {
namespace {

// What a pattern does while it is "on": cap the link(s) to a rate, or run a background flow.
struct Effect {
  std::optional<double> rate_bps;
  std::optional<FlowSpec> flow;
};

class Expander {
 public:
  Expander(const TimelineContext& ctx, std::vector<Event>& out) : ctx_(ctx), out_(out) {}

  Result<void> entry(const JsonReader& r, double offset_s) {
    if (auto ok = r.check_keys({"at", "link", "rate", "flow", "periodic", "random", "ramp", "trace", "loop"}); !ok) {
      return ok.error();
    }
    auto at = r.duration("at");
    if (!at) {
      return at.error();
    }
    const double t = offset_s + to_seconds(*at);
    int kinds = 0;
    for (const char* k : {"rate", "flow", "periodic", "random", "ramp", "trace", "loop"}) {
      kinds += r.has(k) ? 1 : 0;
    }
    if (kinds != 1) {
      return r.error("expected exactly one of rate, flow, periodic, random, ramp, trace or loop, got " +
                     std::to_string(kinds));
    }
    auto links = link_names(r);
    if (!links) {
      return links.error();
    }
    if (r.has("rate")) {
      auto rate = r.rate_bps("rate");
      if (!rate) {
        return rate.error();
      }
      return set_rate(r, *links, t, *rate);
    }
    if (r.has("flow")) {
      if (r.has("link")) {
        return r.error_at("link", "a flow runs between nodes; drop \"link\"");
      }
      auto flow = parse_flow(r.at("flow"), ctx_.scenario);
      if (!flow) {
        return flow.error();
      }
      auto duration = r.at("flow").optional_duration("duration");
      if (!duration) {
        return duration.error();
      }
      add_flow(r, t, *flow, *duration ? std::optional<double>(to_seconds(**duration)) : std::nullopt);
      return {};
    }
    if (r.has("periodic")) {
      return periodic(r, *links, t);
    }
    if (r.has("random")) {
      return random(r, *links, t);
    }
    if (r.has("ramp")) {
      return ramp(r, *links, t);
    }
    if (r.has("trace")) {
      return trace(r, *links, t);
    }
    return loop(r, t);
  }

 private:
  // The links an entry names: one, or every link for "*"; empty when it names none.
  Result<std::vector<const LinkSpec*>> link_names(const JsonReader& r) {
    std::vector<const LinkSpec*> out;
    auto link = r.optional_string("link");
    if (!link) {
      return link.error();
    }
    if (!*link) {
      return out;
    }
    if (**link == "*") {
      for (const auto& l : ctx_.scenario.links) {
        out.push_back(&l);
      }
      return out;
    }
    const LinkSpec* l = ctx_.scenario.find_link(**link);
    if (l == nullptr) {
      return r.error_at("link", "unknown link \"" + **link + "\"; use a name from /links or \"*\" for all");
    }
    out.push_back(l);
    return out;
  }

  Result<void> need_links(const JsonReader& r, const std::vector<const LinkSpec*>& links) {
    if (links.empty()) {
      return r.error_at("link", "missing; expected the link to change, or \"*\" for all");
    }
    return {};
  }

  Result<void> set_rate(const JsonReader& r, const std::vector<const LinkSpec*>& links, double t, double rate) {
    if (auto ok = need_links(r, links); !ok) {
      return ok;
    }
    if (rate <= 0) {
      return r.error_at("rate", "expected a positive rate; a link at 0 would stall TCP for good");
    }
    for (const LinkSpec* l : links) {
      const DisciplineInfo& d = *find_discipline(l->qdisc);
      if (rate > d.max_rate_bps) {
        return r.error_at("rate", "link \"" + l->name + "\" uses " + std::string(d.name) + ", whose rate stops at " +
                                      format_rate(d.max_rate_bps));
      }
    }
    if (t >= ctx_.scenario.duration_s) {
      return {};
    }
    for (const LinkSpec* l : links) {
      Event e;
      e.at_s = t;
      e.kind = Event::Kind::kSetRate;
      e.link = l->name;
      e.rate_bps = rate;
      e.origin = r.path();
      out_.push_back(std::move(e));
    }
    return {};
  }

  void add_flow(const JsonReader& r, double t, const FlowSpec& flow, std::optional<double> duration_s) {
    if (t >= ctx_.scenario.duration_s) {
      return;
    }
    Event start;
    start.at_s = t;
    start.kind = Event::Kind::kFlowStart;
    start.flow = flow;
    start.origin = r.path();
    out_.push_back(start);
    if (duration_s && t + *duration_s < ctx_.scenario.duration_s) {
      Event stop = start;
      stop.at_s = t + *duration_s;
      stop.kind = Event::Kind::kFlowStop;
      out_.push_back(std::move(stop));
    }
  }

  // An on-episode from `start` lasting `length`: the effect, then back to each link's base rate.
  Result<void> episode(const JsonReader& r, const std::vector<const LinkSpec*>& links, const Effect& effect,
                       double start, double length) {
    if (effect.flow) {
      add_flow(r, start, *effect.flow, length);
      return {};
    }
    if (auto ok = set_rate(r, links, start, *effect.rate_bps); !ok) {
      return ok;
    }
    for (const LinkSpec* l : links) {
      if (auto ok = set_rate(r, {l}, start + length, l->rate_bps); !ok) {
        return ok;
      }
    }
    return {};
  }

  Result<Effect> effect(const JsonReader& p, const JsonReader& entry, const std::vector<const LinkSpec*>& links) {
    Effect e;
    if (p.has("rate") == p.has("flow")) {
      return p.error("expected exactly one of \"rate\" (cap the link) or \"flow\" (run background traffic)");
    }
    if (p.has("rate")) {
      if (auto ok = need_links(entry, links); !ok) {
        return ok.error();
      }
      auto rate = p.rate_bps("rate");
      if (!rate) {
        return rate.error();
      }
      e.rate_bps = *rate;
      return e;
    }
    if (!links.empty()) {
      return entry.error_at("link", "a flow runs between nodes; drop \"link\"");
    }
    if (p.at("flow").has("duration")) {
      return p.at("flow").error_at("duration", "the pattern sets how long each flow runs; drop \"duration\"");
    }
    auto flow = parse_flow(p.at("flow"), ctx_.scenario);
    if (!flow) {
      return flow.error();
    }
    e.flow = std::move(*flow);
    return e;
  }

  Result<double> until(const JsonReader& p) {
    auto u = p.optional_duration("until");
    if (!u) {
      return u.error();
    }
    return *u ? std::min(to_seconds(**u), ctx_.scenario.duration_s) : ctx_.scenario.duration_s;
  }

  Result<void> periodic(const JsonReader& entry, const std::vector<const LinkSpec*>& links, double t) {
    const JsonReader p = entry.at("periodic");
    if (auto ok = p.check_keys({"period", "on", "rate", "flow", "until"}); !ok) {
      return ok;
    }
    auto period = p.duration("period");
    auto on = p.duration("on");
    auto end = until(p);
    if (auto e = first_error(period, on, end)) {
      return *e;
    }
    const double period_s = to_seconds(*period);
    const double on_s = to_seconds(*on);
    if (!(on_s > 0 && on_s < period_s)) {
      return p.error_at("on", "expected a duration above 0 and below the period (" + format_seconds(period_s) + ")");
    }
    auto what = effect(p, entry, links);
    if (!what) {
      return what.error();
    }
    for (double start = t; start < *end; start += period_s) {
      if (auto ok = episode(p, links, *what, start, std::min(on_s, *end - start)); !ok) {
        return ok;
      }
    }
    return {};
  }

  Result<void> random(const JsonReader& entry, const std::vector<const LinkSpec*>& links, double t) {
    const JsonReader p = entry.at("random");
    if (auto ok = p.check_keys({"mean_gap", "duration", "duration_dist", "rate", "flow", "seed", "until"}); !ok) {
      return ok;
    }
    auto gap = p.duration("mean_gap");
    auto length = p.duration("duration");
    auto dist = p.optional_string("duration_dist");
    auto seed = p.optional_integer("seed");
    auto end = until(p);
    if (auto e = first_error(gap, length, dist, seed, end)) {
      return *e;
    }
    const std::string d = dist->value_or("exponential");
    if (d != "exponential" && d != "fixed") {
      return p.error_at("duration_dist", "expected \"exponential\" or \"fixed\", got \"" + d + "\"");
    }
    if (to_seconds(*gap) <= 0 || to_seconds(*length) <= 0) {
      return p.error("mean_gap and duration must be positive");
    }
    auto what = effect(p, entry, links);
    if (!what) {
      return what.error();
    }
    // Alternating renewal process: exponential gaps (Poisson arrivals while off), episodes of
    // fixed or exponential length. Inverse-transform sampling on mt19937_64, so the same seed
    // gives the same timeline with any standard library.
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed->value_or(static_cast<std::int64_t>(ctx_.scenario.seed))));
    const auto exponential = [&rng](double mean) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
      return -mean * std::log1p(-u);
    };
    double now = t;
    for (;;) {
      now += exponential(to_seconds(*gap));
      if (now >= *end) {
        break;
      }
      const double len = d == "fixed" ? to_seconds(*length) : exponential(to_seconds(*length));
      if (auto ok = episode(p, links, *what, now, std::min(len, *end - now)); !ok) {
        return ok;
      }
      now += len;
    }
    return {};
  }

  Result<void> ramp(const JsonReader& entry, const std::vector<const LinkSpec*>& links, double t) {
    const JsonReader p = entry.at("ramp");
    if (auto ok = p.check_keys({"from", "to", "over", "steps"}); !ok) {
      return ok;
    }
    auto from = p.optional_rate_bps("from");
    auto to = p.rate_bps("to");
    auto over = p.duration("over");
    auto steps = p.optional_integer("steps");
    if (auto e = first_error(from, to, over, steps)) {
      return *e;
    }
    const std::int64_t n = steps->value_or(10);
    if (n < 1 || n > 100000) {
      return p.error_at("steps", "expected 1 to 100000 steps, got " + std::to_string(n));
    }
    if (auto ok = need_links(entry, links); !ok) {
      return ok;
    }
    const double over_s = to_seconds(*over);
    for (const LinkSpec* l : links) {
      const double start_rate = from->value_or(l->rate_bps);
      for (std::int64_t i = from->has_value() ? 0 : 1; i <= n; ++i) {
        const double f = static_cast<double>(i) / static_cast<double>(n);
        if (auto ok = set_rate(p, {l}, t + f * over_s, start_rate + f * (*to - start_rate)); !ok) {
          return ok;
        }
      }
    }
    return {};
  }

  Result<void> trace(const JsonReader& entry, const std::vector<const LinkSpec*>& links, double t) {
    const JsonReader p = entry.at("trace");
    if (auto ok = p.check_keys({"file", "format", "bin", "loop", "period", "scale"}); !ok) {
      return ok;
    }
    auto file = p.string("file");
    auto format = p.optional_string("format");
    auto bin = p.optional_duration("bin");
    auto loop = p.optional_boolean("loop");
    auto period = p.optional_duration("period");
    auto scale = p.optional_number("scale");
    if (auto e = first_error(file, format, bin, loop, period, scale)) {
      return *e;
    }
    if (auto ok = need_links(entry, links); !ok) {
      return ok;
    }
    const std::string path = file->front() == '/' ? *file : ctx_.base_dir + "/" + *file;
    auto text = ctx_.read(path);
    if (!text) {
      return p.error_at("file", text.error().message);
    }
    const std::string fmt = format->value_or("csv");
    std::optional<RateTrace> rates;
    double natural_period = 0;
    if (fmt == "csv") {
      auto parsed = parse_rate_trace_csv(*text, path);
      if (!parsed) {
        return p.error_at("file", parsed.error().message);
      }
      rates = std::move(*parsed);
    } else if (fmt == "mahimahi") {
      const double bin_s = *bin ? to_seconds(**bin) : 0.1;
      if (bin_s <= 0) {
        return p.error_at("bin", "expected a positive duration");
      }
      auto parsed = parse_mahimahi(*text, path, bin_s);
      if (!parsed) {
        return p.error_at("file", parsed.error().message);
      }
      rates = std::move(parsed->rate);
      natural_period = parsed->period_s;
    } else {
      return p.error_at("format", "expected \"csv\" or \"mahimahi\", got \"" + fmt + "\"");
    }
    const double factor = scale->value_or(1.0);
    if (!(factor > 0)) {
      return p.error_at("scale", "expected a positive factor");
    }
    double period_s = *period ? to_seconds(**period) : natural_period;
    if (loop->value_or(false) && period_s <= 0) {
      return p.error_at("period", "a looping csv trace needs \"period\" (how long one pass lasts)");
    }
    if (period_s > 0 && rates->points().back().time_s >= period_s) {
      return p.error_at("period", "the trace has points at or after the period " + format_seconds(period_s));
    }
    const double end = ctx_.scenario.duration_s;
    for (double base = t; base < end; base += period_s) {
      for (const auto& point : rates->points()) {
        if (point.rate_bps <= 0) {
          return p.error_at("file", path + ": a rate of 0 at " + format_seconds(point.time_s) +
                                        " would stall TCP for good; use a small positive rate");
        }
        if (auto ok = set_rate(entry, links, base + point.time_s, point.rate_bps * factor); !ok) {
          return ok;
        }
      }
      if (!loop->value_or(false)) {
        break;
      }
    }
    return {};
  }

  Result<void> loop(const JsonReader& entry, double t) {
    const JsonReader p = entry.at("loop");
    if (auto ok = p.check_keys({"every", "until", "timeline"}); !ok) {
      return ok;
    }
    if (entry.has("link")) {
      return entry.error_at("link", "a loop's events name their own links; drop \"link\"");
    }
    auto every = p.duration("every");
    auto end = until(p);
    if (auto e = first_error(every, end)) {
      return *e;
    }
    if (!p.has("timeline")) {
      return p.error_at("timeline", "missing; expected the events of one pass, at times relative to its start");
    }
    const double every_s = to_seconds(*every);
    if (every_s <= 0) {
      return p.error_at("every", "expected a positive duration");
    }
    const std::size_t before = out_.size();
    for (double base = t; base < *end; base += every_s) {
      if (auto ok = expand_timeline(p.at("timeline"), base, ctx_, out_); !ok) {
        return ok;
      }
    }
    // A pass's events stay inside the loop's window.
    out_.erase(std::remove_if(out_.begin() + static_cast<std::ptrdiff_t>(before), out_.end(),
                              [&](const Event& e) { return e.at_s >= *end; }),
               out_.end());
    return {};
  }

  const TimelineContext& ctx_;
  std::vector<Event>& out_;
};

}  // namespace

Result<FlowSpec> parse_flow(const JsonReader& r, const Scenario& scenario) {
  if (auto ok =
          r.check_keys({"name", "from", "to", "protocol", "streams", "rate", "congestion", "message_size", "duration"});
      !ok) {
    return ok.error();
  }
  FlowSpec f;
  auto name = r.optional_string("name");
  auto from = r.string("from");
  auto to = r.string("to");
  auto protocol = r.optional_string("protocol");
  auto streams = r.optional_integer("streams");
  auto rate = r.optional_string("rate");
  auto congestion = r.optional_string("congestion");
  auto message = r.optional_size_bytes("message_size");
  if (auto e = first_error(name, from, to, protocol, streams, rate, congestion, message)) {
    return *e;
  }
  f.from = *from;
  f.to = *to;
  for (const auto& [key, node] : {std::pair{"from", f.from}, std::pair{"to", f.to}}) {
    if (scenario.node_index(node) < 0) {
      return r.error_at(key, "unknown node \"" + node + "\"; nodes are listed in /nodes");
    }
  }
  if (f.from == f.to) {
    return r.error_at("to", "a flow goes between two different nodes");
  }
  f.name = name->value_or(f.from + "-" + f.to);
  const std::string proto = protocol->value_or("tcp");
  if (proto == "tcp") {
    f.protocol = Protocol::kTcp;
  } else if (proto == "udp") {
    f.protocol = Protocol::kUdp;
  } else {
    return r.error_at("protocol", "expected \"tcp\" or \"udp\", got \"" + proto + "\"");
  }
  f.streams = static_cast<int>(streams->value_or(1));
  if (f.streams < 1 || f.streams > 128) {
    return r.error_at("streams", "expected 1 to 128 streams");
  }
  const std::string rate_text = rate->value_or("unlimited");
  if (rate_text != "unlimited") {
    auto bps = parse_rate_bps(rate_text);
    if (!bps || *bps <= 0) {
      return r.error_at("rate",
                        "expected \"unlimited\" or a positive rate like \"500Mbit\", got \"" + rate_text + "\"");
    }
    f.rate_bps = *bps;
  }
  if (f.protocol == Protocol::kUdp && f.rate_bps == 0) {
    return r.error_at("rate", "a UDP flow needs a rate (UDP has no congestion control to stop it)");
  }
  f.congestion = congestion->value_or("cubic");
  f.message_bytes = message->value_or(128 * 1024);
  return f;
}

Result<void> expand_timeline(const JsonReader& timeline, double offset_s, const TimelineContext& ctx,
                             std::vector<Event>& out) {
  if (auto ok = timeline.expect_array(); !ok) {
    return ok;
  }
  Expander expander(ctx, out);
  for (std::size_t i = 0; i < timeline.json().size(); ++i) {
    if (auto ok = expander.entry(timeline.at(i), offset_s); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace contend::emulator::detail
