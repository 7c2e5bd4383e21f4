#pragma once
// Private: what a timeline pattern (patterns/<key>.cpp) is given and may call, and its line in
// the registry (patterns/registry.cpp). A pattern reads its entry's JSON and appends plain, timed
// events; the helpers here validate what every pattern shares (links, rates, flows, "until").

#include <optional>
#include <string>
#include <vector>

#include "contend/emulator/scenario/pattern_registry.h"
#include "scenario/timeline.h"

namespace contend::emulator::detail {

// What a pattern does while it is "on": cap the link(s) to a rate, run a background flow, or
// stall the link(s)' messages.
struct Effect {
  std::optional<double> rate_bps;
  std::optional<FlowSpec> flow;
  std::optional<double> stall_s;
};

struct Episode {
  double start_s = 0;
  double length_s = 0;
};

// How many episodes on_off_episodes makes: ceil((end_s - start_s) / period_s), at least 0.
double on_off_count(double start_s, double end_s, double period_s);
// On/off: an episode of `on_s` every `period_s` from `start_s` until `end_s`, the last one cut
// there. Periodic patterns and flow jobs' "on"/"off" both expand through it. Requires positive
// durations and at most kMaxScenarioEvents episodes (check on_off_count against the budget first).
std::vector<Episode> on_off_episodes(double start_s, double end_s, double on_s, double period_s);

// One timeline entry being expanded by its pattern. Not thread-safe.
class PatternCall {
 public:
  PatternCall(const JsonReader& entry, std::string key, double at_s, std::vector<const LinkSpec*> links,
              const TimelineContext& ctx, std::vector<Event>& out)
      : entry_(entry), key_(std::move(key)), at_s_(at_s), links_(std::move(links)), ctx_(ctx), out_(out) {}

  const JsonReader& entry() const { return entry_; }
  JsonReader body() const { return entry_.at(key_); }  // the pattern's own member
  double at_s() const { return at_s_; }                // the entry's time, offset included
  // The links the entry names: one, or every link for "*"; empty when it names none.
  const std::vector<const LinkSpec*>& links() const { return links_; }
  const TimelineContext& context() const { return ctx_; }
  const Scenario& scenario() const { return ctx_.scenario; }
  std::vector<Event>& events() { return out_; }

  // Errors unless the entry names a link (`need_links`), or unless it names none (`no_link`).
  Result<void> need_links() const;
  Result<void> no_link(const std::string& why) const;
  // Errors naming `where` and the limit unless `count` more events fit in the scenario's
  // kMaxScenarioEvents: a pattern calls it with what it will make before making it.
  Result<void> expect_events(const JsonReader& where, double count) const;
  // Errors (without a location) unless every one of `links` can be shaped at `rate`
  // (rate_problem, htb_params.h).
  Result<void> check_rate(const std::vector<const LinkSpec*>& links, double rate) const;
  // `rate` on `links` from `t`; `where` is the JSON the rate came from (errors, events' origin).
  // Times at or after the scenario's end are dropped. Each event counts against the budget.
  Result<void> set_rate(const JsonReader& where, const std::vector<const LinkSpec*>& links, double t, double rate);
  // A stall of `stall_s` (0 ends it) on `links` from `t`, or from iteration `iteration` when it is
  // >= 0 (then `t` is ignored); `where` as set_rate's. Checked against 0..kMaxStallS; counted.
  Result<void> set_stall(const JsonReader& where, const std::vector<const LinkSpec*>& links, double t, double stall_s,
                         int iteration = -1);
  // A flow start at `t` and, when `duration_s` ends before the scenario, its stop; counted too.
  Result<void> add_flow(const JsonReader& where, double t, const FlowSpec& flow, std::optional<double> duration_s);
  // An on-episode from `start` lasting `length`: the effect, then back to each link's base rate
  // (a stall: back to none).
  Result<void> episode(const JsonReader& where, const Effect& effect, double start, double length);
  // A pattern's "rate", "flow" or "stall" (exactly one) in `p`.
  Result<Effect> effect(const JsonReader& p) const;
  // `p`'s "until", at most (and by default) the scenario's duration.
  Result<double> until(const JsonReader& p) const;

 private:
  const JsonReader& entry_;
  std::string key_;
  double at_s_;
  std::vector<const LinkSpec*> links_;
  const TimelineContext& ctx_;
  std::vector<Event>& out_;
};

// Each kind's registration (entry and expansion), defined in its file: scenario/patterns/<key>.cpp.
PatternItem rate_pattern();
PatternItem flow_pattern();
PatternItem traffic_pattern();
PatternItem periodic_pattern();
PatternItem random_pattern();
PatternItem ramp_pattern();
PatternItem trace_pattern();
PatternItem loop_pattern();
PatternItem stall_pattern();
PatternItem state_pattern();

}  // namespace contend::emulator::detail
