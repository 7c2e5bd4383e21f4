#include "contend/pipeline/policy/period_predictor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace contend::pipeline {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Whether every value is within `tolerance` of their median, plus its own `slack` (the sampling's
// uncertainty: a change is dated to within the spacing of the two samples around it).
bool steady(const std::vector<double>& values, const std::vector<double>& slack, double tolerance) {
  const double m = median(values);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!(m > 0) || std::abs(values[i] - m) > tolerance * m + slack[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

// One reading far above the rest (a token bucket's burst timed as the rate) would otherwise set the
// high level, put every later sample below kLowFraction of it and hide every drop.
double PeriodPredictor::held_high(const std::vector<Sample>& samples) {
  double top = samples.size() == 1 ? samples.front().bps : 0;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    top = std::max(top, std::min(samples[i - 1].bps, samples[i].bps));
  }
  return top;
}

void PeriodPredictor::record(double t_s, const std::vector<double>& link_bps) {
  for (std::size_t r = 0; r < links_.size() && r < link_bps.size(); ++r) {
    if (link_bps[r] > 0 && std::isfinite(link_bps[r])) {
      links_[r].push_back({t_s, link_bps[r]});
      if (links_[r].size() > kMaxSamples) {
        links_[r].erase(links_[r].begin());
      }
    }
  }
}

std::optional<PeriodPredictor::Period> PeriodPredictor::period(int link) const {
  const std::vector<Sample>& samples = links_[link];
  const double top = held_high(samples);
  // Drops and recoveries between two samples are dated halfway between them, each to within half
  // their spacing: a gap between two drops, or a drop's length, to within half the two spacings.
  std::vector<double> drops, drop_spans;  // a drop's date and the spacing around it
  std::vector<double> ons, on_slack;
  std::vector<double> lows, highs;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const bool low = samples[i].bps < kLowFraction * top;
    (low ? lows : highs).push_back(samples[i].bps);
    if (i == 0) {
      continue;
    }
    const bool was_low = samples[i - 1].bps < kLowFraction * top;
    const double at = 0.5 * (samples[i - 1].t_s + samples[i].t_s);
    const double span = samples[i].t_s - samples[i - 1].t_s;
    if (low && !was_low) {
      drops.push_back(at);
      drop_spans.push_back(span);
    } else if (!low && was_low && !drops.empty()) {
      ons.push_back(at - drops.back());
      on_slack.push_back(0.5 * (drop_spans.back() + span));
    }
  }
  if (static_cast<int>(drops.size()) < kMinDrops || ons.empty()) {
    return std::nullopt;
  }
  std::vector<double> gaps, gap_slack;
  for (std::size_t i = 1; i < drops.size(); ++i) {
    gaps.push_back(drops[i] - drops[i - 1]);
    gap_slack.push_back(0.5 * (drop_spans[i - 1] + drop_spans[i]));
  }
  if (!steady(gaps, gap_slack, kTolerance) || !steady(ons, on_slack, kTolerance)) {
    return std::nullopt;
  }
  const Period p{median(gaps), median(ons), drops.back(), median(lows), median(highs)};
  if (p.on_s >= p.period_s) {
    return std::nullopt;
  }
  return p;
}

std::optional<std::vector<RateTrace>> PeriodPredictor::predict(double now_s) const {
  std::vector<RateTrace> out;
  bool any = false;
  for (int r = 0; r < static_cast<int>(links_.size()); ++r) {
    const auto p = period(r);
    if (!p) {
      const double last = links_[r].empty() ? std::numeric_limits<double>::infinity() : links_[r].back().bps;
      out.push_back(RateTrace::constant(last));
      continue;
    }
    any = true;
    // The drops to come: at last_drop + n x period, each for on_s; two periods ahead suffice.
    std::vector<RateTrace::Point> points;
    const double since = now_s - p->last_drop_s;
    const double n = std::floor(since / p->period_s);
    const double drop = p->last_drop_s + n * p->period_s;  // the latest drop at or before now
    for (int i = 0; i < 3; ++i) {
      const double start = drop + i * p->period_s - now_s;
      const double end = start + p->on_s;
      if (end <= 0) {
        continue;
      }
      if (points.empty() && start > 0) {
        points.push_back({0, p->high_bps});
      }
      points.push_back({std::max(0.0, start), p->low_bps});
      points.push_back({end, p->high_bps});
    }
    out.push_back(RateTrace::from_points(std::move(points)).value());
  }
  if (!any) {
    return std::nullopt;
  }
  return out;
}

}  // namespace contend::pipeline
