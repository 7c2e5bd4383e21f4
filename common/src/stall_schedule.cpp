#include "contend/common/stall_schedule.h"

#include <algorithm>

#include "contend/common/check.h"

namespace contend {
namespace {

void add(std::vector<StallSchedule::Change>& changes, double at, double stall_s) {
  CONTEND_CHECK(stall_s >= 0 && stall_s <= kMaxStallS, "a stall outside 0..kMaxStallS");
  CONTEND_CHECK(changes.empty() || at >= changes.back().at, "stall changes out of order");
  if (!changes.empty() && changes.back().at == at) {
    changes.back().stall_s = stall_s;
    return;
  }
  changes.push_back({at, stall_s});
}

// The stall of the last change at or before `at`; 0 before the first.
double in_force(const std::vector<StallSchedule::Change>& changes, double at) {
  const auto after = std::upper_bound(changes.begin(), changes.end(), at,
                                      [](double v, const StallSchedule::Change& c) { return v < c.at; });
  return after == changes.begin() ? 0.0 : std::prev(after)->stall_s;
}

}  // namespace

void StallSchedule::add_at_time(double time_s, double stall_s) {
  add(by_time_, time_s, stall_s);
}

void StallSchedule::add_at_iteration(int iteration, double stall_s) {
  add(by_iteration_, iteration, stall_s);
}

double StallSchedule::at(double time_s, int iteration) const {
  return std::max(in_force(by_time_, time_s), in_force(by_iteration_, iteration));
}

bool StallSchedule::empty() const {
  const auto zero = [](const Change& c) { return c.stall_s == 0; };
  return std::all_of(by_time_.begin(), by_time_.end(), zero) &&
         std::all_of(by_iteration_.begin(), by_iteration_.end(), zero);
}

}  // namespace contend
