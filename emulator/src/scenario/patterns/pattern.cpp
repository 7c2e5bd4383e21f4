#include "scenario/patterns/pattern.h"

#include <algorithm>
#include <cmath>

#include "contend/common/stall_schedule.h"
#include "contend/common/units.h"
#include "contend/emulator/net/htb_params.h"

namespace contend::emulator::detail {

double on_off_count(double start_s, double end_s, double period_s) {
  return end_s > start_s ? std::ceil((end_s - start_s) / period_s) : 0.0;
}

std::vector<Episode> on_off_episodes(double start_s, double end_s, double on_s, double period_s) {
  CONTEND_CHECK(on_s > 0 && period_s > 0, "on/off needs positive durations");
  CONTEND_CHECK(on_off_count(start_s, end_s, period_s) <= static_cast<double>(kMaxScenarioEvents),
                "on/off episodes not checked against the event budget");
  std::vector<Episode> out;
  for (double start = start_s; start < end_s; start += period_s) {
    out.push_back({start, std::min(on_s, end_s - start)});
  }
  return out;
}

Result<void> PatternCall::need_links() const {
  if (links_.empty()) {
    return entry_.error_at("link", "missing; expected the link to change, or \"*\" for all");
  }
  return {};
}

Result<void> PatternCall::no_link(const std::string& why) const {
  if (entry_.has("link")) {
    return entry_.error_at("link", why + "; drop \"link\"");
  }
  return {};
}

Result<void> PatternCall::set_rate(const JsonReader& where, const std::vector<const LinkSpec*>& links, double t,
                                   double rate) {
  if (links.empty()) {
    return need_links();
  }
  if (rate <= 0) {
    return where.error_at("rate", "expected a positive rate; a link at 0 would stall TCP for good");
  }
  if (auto ok = check_rate(links, rate); !ok) {
    return where.error_at("rate", ok.error().message);
  }
  if (t >= ctx_.scenario.duration_s) {
    return {};
  }
  if (auto ok = ctx_.budget.take(where, links.size()); !ok) {
    return ok;
  }
  for (const LinkSpec* l : links) {
    out_.push_back(Event{t, SetRate{l->name, rate}, where.path()});
  }
  return {};
}

Result<void> PatternCall::check_rate(const std::vector<const LinkSpec*>& links, double rate) const {
  for (const LinkSpec* l : links) {
    if (const std::string problem = rate_problem(*l, rate); !problem.empty()) {
      return make_error(Errc::kParse, "link \"" + l->name + "\": " + problem);
    }
  }
  return {};
}

Result<void> PatternCall::expect_events(const JsonReader& where, double count) const {
  return ctx_.budget.expect(where, count);
}

Result<void> PatternCall::add_flow(const JsonReader& where, double t, const FlowSpec& flow,
                                   std::optional<double> duration_s) {
  if (t >= ctx_.scenario.duration_s) {
    return {};
  }
  const bool stops = duration_s && t + *duration_s < ctx_.scenario.duration_s;
  if (auto ok = ctx_.budget.take(where, stops ? 2 : 1); !ok) {
    return ok;
  }
  out_.push_back(Event{t, FlowStart{flow}, where.path()});
  if (stops) {
    out_.push_back(Event{t + *duration_s, FlowStop{flow}, where.path()});
  }
  return {};
}

Result<void> PatternCall::set_stall(const JsonReader& where, const std::vector<const LinkSpec*>& links, double t,
                                    double stall_s, int iteration) {
  if (links.empty()) {
    return need_links();
  }
  if (!(stall_s >= 0 && stall_s <= kMaxStallS)) {
    return where.error_at("stall", "expected a stall of 0s (none) to " + format_seconds(kMaxStallS));
  }
  if (iteration < 0 && t >= ctx_.scenario.duration_s) {
    return {};
  }
  if (auto ok = ctx_.budget.take(where, links.size()); !ok) {
    return ok;
  }
  for (const LinkSpec* l : links) {
    out_.push_back(Event{iteration < 0 ? t : 0, SetStall{l->name, stall_s, iteration}, where.path()});
  }
  return {};
}

Result<void> PatternCall::episode(const JsonReader& where, const Effect& effect, double start, double length) {
  if (effect.flow) {
    return add_flow(where, start, *effect.flow, length);
  }
  if (effect.stall_s) {
    if (auto ok = set_stall(where, links_, start, *effect.stall_s); !ok) {
      return ok;
    }
    return set_stall(where, links_, start + length, 0);
  }
  if (auto ok = set_rate(where, links_, start, *effect.rate_bps); !ok) {
    return ok;
  }
  for (const LinkSpec* l : links_) {
    if (auto ok = set_rate(where, {l}, start + length, l->rate_bps); !ok) {
      return ok;
    }
  }
  return {};
}

Result<Effect> PatternCall::effect(const JsonReader& p) const {
  if (static_cast<int>(p.has("rate")) + static_cast<int>(p.has("flow")) + static_cast<int>(p.has("stall")) != 1) {
    return p.error(
        "expected exactly one of \"rate\" (cap the link), \"flow\" (run background traffic) or \"stall\" (hold "
        "every message on the link)");
  }
  Effect e;
  if (p.has("stall")) {
    auto stall = p.duration("stall");
    auto links = need_links();
    if (auto error = first_error(links, stall)) {
      return *error;
    }
    e.stall_s = to_seconds(*stall);
    return e;
  }
  if (p.has("rate")) {
    auto rate = p.rate_bps("rate");
    auto links = need_links();
    if (auto error = first_error(links, rate)) {
      return *error;
    }
    e.rate_bps = *rate;
    return e;
  }
  if (auto ok = no_link("a flow runs between nodes"); !ok) {
    return ok.error();
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

Result<double> PatternCall::until(const JsonReader& p) const {
  auto u = p.optional_duration("until");
  if (!u) {
    return u.error();
  }
  return *u ? std::min(to_seconds(**u), ctx_.scenario.duration_s) : ctx_.scenario.duration_s;
}

}  // namespace contend::emulator::detail
