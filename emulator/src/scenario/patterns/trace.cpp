// "trace": {"file", "format", "of", "bin", "loop", "period", "scale"}: a rate change per point of a
// bandwidth trace (CSV `time_s,rate` or Mahimahi's delivery opportunities), relative to "at",
// repeated every `period` when it loops; with "of": "stall", a stall change per point of a CSV
// `time_s,stall`. "format": "pipemorph": PipeMorph's iteration-indexed straggler trace, its links
// named in the file as stage pairs (pipemorph_trace.h), applied from the iterations it names.

#include <algorithm>
#include <cmath>

#include "contend/common/units.h"
#include "contend/emulator/scenario/mahimahi.h"
#include "contend/emulator/scenario/pipemorph_trace.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {
namespace {

struct LoadedTrace {
  std::string path;
  RateTrace rates;              // rates in bit/s, or with "of": "stall" stalls in seconds
  double natural_period_s = 0;  // Mahimahi's: its last timestamp rounded up to a bin
};

// The trace file `p` names, relative paths from the scenario's folder, as text.
Result<std::pair<std::string, std::string>> read_trace(const JsonReader& p, const TimelineContext& ctx) {
  auto file = p.string("file");
  if (!file) {
    return file.error();
  }
  const std::string path = !file->empty() && file->front() == '/' ? *file : ctx.base_dir + "/" + *file;
  auto text = ctx.read(path);
  if (!text) {
    return p.error_at("file", text.error().message);
  }
  return std::pair<std::string, std::string>(path, std::move(*text));
}

// Reads and parses the trace file `p` names (csv or mahimahi; `stalls`: a csv of stalls).
Result<LoadedTrace> load(const JsonReader& p, const TimelineContext& ctx, bool stalls) {
  auto format = p.optional_string("format");
  auto bin = p.optional_duration("bin");
  auto file = read_trace(p, ctx);
  if (auto e = first_error(format, bin, file)) {
    return *e;
  }
  const auto& [path, text] = *file;
  const std::string fmt = format->value_or("csv");
  if (fmt == "csv") {
    auto parsed = stalls ? parse_stall_trace_csv(text, path) : parse_rate_trace_csv(text, path);
    if (!parsed) {
      return p.error_at("file", parsed.error().message);
    }
    return LoadedTrace{path, std::move(*parsed), 0};
  }
  if (fmt != "mahimahi" || stalls) {
    return p.error_at("format", stalls ? "a trace of stalls is a csv (time_s,stall) or \"pipemorph\""
                                       : "expected \"csv\", \"mahimahi\" or \"pipemorph\", got \"" + fmt + "\"");
  }
  const double bin_s = *bin ? to_seconds(**bin) : 0.1;
  if (auto ok = check_min_period(p, "bin", bin_s); !ok) {
    return ok.error();
  }
  auto parsed = parse_mahimahi(text, path, bin_s);
  if (!parsed) {
    return p.error_at("file", parsed.error().message);
  }
  return LoadedTrace{path, std::move(parsed->rate), parsed->period_s};
}

// How many of the trace's points fall within `window_s` of its start, over every pass when it
// loops every `period_s`: the rate changes it makes per link.
double points_played(const RateTrace& rates, double window_s, double period_s, bool loops) {
  const auto& points = rates.points();
  const auto before = [&points](double t) {
    return static_cast<double>(std::lower_bound(points.begin(), points.end(), t,
                                                [](const RateTrace::Point& x, double v) { return x.time_s < v; }) -
                               points.begin());
  };
  if (window_s <= 0) {
    return 0;
  }
  if (!loops) {
    return before(window_s);
  }
  const double full = std::floor(window_s / period_s);
  return full * static_cast<double>(points.size()) + before(window_s - full * period_s);
}

// Every point's rate, scaled, is one the links can be shaped at; errors name the trace file and
// the point's time (the values are the trace's own numbers). Stalls are checked as they are set.
Result<void> check_rates(const PatternCall& call, const JsonReader& p, const LoadedTrace& trace, double factor,
                         bool stalls) {
  if (stalls) {
    return {};
  }
  for (const auto& point : trace.rates.points()) {
    const std::string where = trace.path + ": the rate at " + format_seconds(point.time_s);
    if (point.rate_bps <= 0) {
      return p.error_at("file", where + " is 0, which would stall TCP for good; use a small positive rate");
    }
    if (auto ok = call.check_rate(call.links(), point.rate_bps * factor); !ok) {
      return p.error_at("file", where + (factor != 1.0 ? " (scaled)" : "") + ": " + ok.error().message);
    }
  }
  return {};
}

// The scenario link joining the nodes of stages a and b, or nullptr.
const LinkSpec* link_between(const Scenario& s, int a, int b) {
  const int n = static_cast<int>(s.nodes.size());
  if (a >= n || b >= n) {
    return nullptr;
  }
  for (const LinkSpec& l : s.links) {
    if ((l.from == s.nodes[a] && l.to == s.nodes[b]) || (l.from == s.nodes[b] && l.to == s.nodes[a])) {
      return &l;
    }
  }
  return nullptr;
}

// PipeMorph's trace: each change a stall from its iteration on, on the links it names.
Result<void> expand_pipemorph(PatternCall& call, const JsonReader& p, double factor) {
  if (auto ok = call.no_link("a PipeMorph trace names its links (stage pairs i_j)"); !ok) {
    return ok;
  }
  auto file = read_trace(p, call.context());
  if (!file) {
    return file.error();
  }
  auto changes = parse_pipemorph_trace(file->second, file->first);
  if (!changes) {
    return p.error_at("file", changes.error().message);
  }
  for (const PipeMorphChange& c : *changes) {
    for (const auto& [a, b] : c.links) {
      const LinkSpec* l = link_between(call.scenario(), a, b);
      if (l == nullptr) {
        return p.error_at("file", file->first + ": iteration " + std::to_string(c.iteration) + " names link " +
                                      std::to_string(a) + "_" + std::to_string(b) +
                                      ", but no scenario link joins those nodes (stages index \"nodes\")");
      }
      if (auto ok = call.set_stall(p, {l}, 0, c.delay_s * factor, c.iteration); !ok) {
        return ok;
      }
    }
  }
  return {};
}

// What a csv trace's points set, and by how much they are scaled.
struct Scaled {
  double factor = 1;
  bool stalls = false;  // "of": "stall" (else the rate)
};

// Every point of `points` from the pattern's time on, as a rate change or a stall on the call's
// links, once or (`loops`) every `period_s` until the scenario ends.
Result<void> play_points(PatternCall& call, const JsonReader& p, const RateTrace& points, Scaled scaled,
                         double period_s, bool loops) {
  for (double base = call.at_s(); base < call.scenario().duration_s; base += period_s) {
    for (const auto& point : points.points()) {
      const double t = base + point.time_s;
      const double value = point.rate_bps * scaled.factor;
      auto ok = scaled.stalls ? call.set_stall(p, call.links(), t, value)
                              : call.set_rate(call.entry(), call.links(), t, value);
      if (!ok) {
        return ok;
      }
    }
    if (!loops) {
      break;
    }
  }
  return {};
}

}  // namespace

Result<void> expand_trace(PatternCall& call) {
  const JsonReader p = call.body();
  if (auto ok = p.check_keys({"file", "format", "of", "bin", "loop", "period", "scale"}); !ok) {
    return ok;
  }
  auto loop = p.optional_boolean("loop");
  auto period = p.optional_duration("period");
  auto scale = p.optional_number("scale");
  auto of = p.optional_string("of");
  auto format = p.optional_string("format");
  if (auto e = first_error(loop, period, scale, of, format)) {
    return *e;
  }
  const double factor = scale->value_or(1.0);
  if (!(factor > 0)) {
    return p.error_at("scale", "expected a positive factor");
  }
  if (format->value_or("") == "pipemorph") {
    return expand_pipemorph(call, p, factor);
  }
  const std::string what = of->value_or("rate");
  if (what != "rate" && what != "stall") {
    return p.error_at("of", "expected \"rate\" or \"stall\", got \"" + what + "\"");
  }
  const bool stalls = what == "stall";
  if (auto ok = call.need_links(); !ok) {
    return ok;
  }
  auto trace = load(p, call.context(), stalls);
  if (!trace) {
    return trace.error();
  }
  const double period_s = *period ? to_seconds(**period) : trace->natural_period_s;
  if (loop->value_or(false) && period_s <= 0) {
    return p.error_at("period", "a looping csv trace needs \"period\" (how long one pass lasts)");
  }
  const bool loops = loop->value_or(false);
  if (auto ok = loops ? check_min_period(p, "period", period_s) : Result<void>(); !ok) {
    return ok;
  }
  if (period_s > 0 && trace->rates.points().back().time_s >= period_s) {
    return p.error_at("period", "the trace has points at or after the period " + format_seconds(period_s));
  }
  const double link_count = static_cast<double>(call.links().size());
  const double played = points_played(trace->rates, call.scenario().duration_s - call.at_s(), period_s, loops);
  if (auto ok = call.expect_events(p, played * link_count); !ok) {
    return ok;
  }
  if (auto ok = check_rates(call, p, *trace, factor, stalls); !ok) {
    return ok;
  }
  return play_points(call, p, trace->rates, Scaled{factor, stalls}, period_s, loops);
}

PatternItem trace_pattern() {
  return {{"", "trace", "a rate change per point of a bandwidth trace", {}}, PatternKind{expand_trace}};
}

}  // namespace contend::emulator::detail
