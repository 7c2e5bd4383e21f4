// "random": {"mean_gap", "duration", "duration_dist", "rate" | "flow" | "stall", "seed", "until"}: episodes
// whose starts are Poisson (exponential gaps from the previous episode's end), lasting a fixed or
// exponential duration.

#include <algorithm>
#include <cmath>
#include <random>

#include "contend/common/units.h"
#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

Result<void> expand_random(PatternCall& call) {
  const JsonReader p = call.body();
  if (auto ok = p.check_keys({"mean_gap", "duration", "duration_dist", "rate", "flow", "stall", "seed", "until"});
      !ok) {
    return ok;
  }
  auto gap = p.duration("mean_gap");
  auto length = p.duration("duration");
  auto dist = p.optional_string("duration_dist");
  auto seed = p.optional_integer("seed");
  auto end = call.until(p);
  if (auto e = first_error(gap, length, dist, seed, end)) {
    return *e;
  }
  const std::string d = dist->value_or("exponential");
  if (d != "exponential" && d != "fixed") {
    return p.error_at("duration_dist", "expected \"exponential\" or \"fixed\", got \"" + d + "\"");
  }
  if (auto e = first_error(check_min_period(p, "mean_gap", to_seconds(*gap)),
                           check_min_period(p, "duration", to_seconds(*length)))) {
    return *e;
  }
  auto what = call.effect(p);
  if (!what) {
    return what.error();
  }
  // On average one episode every mean_gap + duration: refused before drawing when the expected
  // count is over the budget (the budget still counts what is drawn).
  const double per_episode = what->flow ? 2.0 : 2.0 * static_cast<double>(call.links().size());
  const double expected = (*end - call.at_s()) / (to_seconds(*gap) + to_seconds(*length));
  if (auto ok = call.expect_events(p, std::max(0.0, expected) * per_episode); !ok) {
    return ok;
  }
  // Alternating renewal process: exponential gaps (Poisson arrivals while off), episodes of
  // fixed or exponential length. Inverse-transform sampling on mt19937_64, so the same seed
  // gives the same timeline with any standard library.
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed->value_or(static_cast<std::int64_t>(call.scenario().seed))));
  const auto exponential = [&rng](double mean) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
    return -mean * std::log1p(-u);
  };
  double now = call.at_s();
  for (;;) {
    now += exponential(to_seconds(*gap));
    if (now >= *end) {
      return {};
    }
    const double len = d == "fixed" ? to_seconds(*length) : exponential(to_seconds(*length));
    if (auto ok = call.episode(p, *what, now, std::min(len, *end - now)); !ok) {
      return ok;
    }
    now += len;
  }
}

PatternItem random_pattern() {
  return {{"", "random", "episodes at Poisson times, of fixed or exponential length", {}}, PatternKind{expand_random}};
}

}  // namespace contend::emulator::detail
