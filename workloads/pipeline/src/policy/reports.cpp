#include "policy/reports.h"

#include <algorithm>

namespace contend::pipeline::detail {

void LinkEstimates::add(const std::vector<StageReport>& reports) {
  for (std::size_t r = 0; r + 1 < reports.size(); ++r) {
    add(links_[r].forward, reports[r + 1].from_prev, reports[r].to_next);
    add(links_[r].backward, reports[r].from_next, reports[r + 1].to_prev);
  }
}

Measurements LinkEstimates::measurements(const std::vector<StageReport>& reports) const {
  Measurements m;
  for (const StageReport& s : reports) {
    m.stages.push_back({s.forward_s, s.backward_s, s.message_bytes, s.stash_bytes, s.send_s, s.iteration_cost_s});
  }
  for (const Link& link : links_) {
    LinkMeasurement l;
    l.goodput_bps = link.forward.rate;
    l.backward_bps = link.backward.rate;
    l.burst_bytes = static_cast<std::uint64_t>(std::max(0.0, link.forward.burst));
    l.stall_s = std::max(link.forward.stall_s, link.backward.stall_s);
    m.links.push_back(l);
  }
  return m;
}

void LinkEstimates::add(Direction& d, const TransferTotals& t, const SendTotals& sent) {
  if (t.frames > 0 && t.recent_seconds > 0) {
    d.rate = settle_rate(d, 8.0 * static_cast<double>(t.recent_bytes) / t.recent_seconds);
    d.burst = t.recent_burst_bytes;
  }
  if (sent.frames > 0 && d.rate > 0) {
    // The sent tensors' time on the wire as the receiver timed them this iteration (the same
    // frames), else at the settled rate: a rate now that differs from the iteration's (a drop or a
    // recovery inside it) would otherwise leave the difference looking like a stall.
    const double wire_s = t.frames > 0 && t.bytes > 0
                              ? t.seconds * static_cast<double>(sent.bytes) / static_cast<double>(t.bytes)
                              : 8.0 * static_cast<double>(sent.bytes) / d.rate;
    const double stall = (sent.seconds - wire_s) / sent.frames;
    const double floor = std::max(kMinStall, kMinStallShare * wire_s / sent.frames);
    d.stall_s = settle(d.stalls, stall >= floor ? stall : 0, false);
  }
}

double LinkEstimates::settle_rate(Direction& d, double latest) {
  const double settled = d.rate;
  if (d.dropped_from > 0 && settled < kDrop * d.dropped_from && latest >= kDrop * d.dropped_from) {
    const double back = std::min(latest, d.dropped_from);
    d.rates.assign(1, back);  // a level held before: the next drop leaves it again
    return back;
  }
  // The level a drop leaves is one the link held: read at least twice (not the probe's first
  // reading, nor one burst), else the level before stays the one to come back to.
  const bool held = d.rates.size() >= 2;
  const double now = settle(d.rates, latest, true);
  if (held && now < kDrop * settled) {
    d.dropped_from = settled;
  }
  return now;
}

double LinkEstimates::settle(std::vector<double>& seen, double latest, bool lower_is_worse) {
  std::vector<double> sorted = seen;
  seen.push_back(latest);
  if (seen.size() > kSettle) {
    seen.erase(seen.begin());
  }
  if (!sorted.empty()) {
    std::sort(sorted.begin(), sorted.end());
    const double before = sorted[(sorted.size() - 1) / 2];
    if (lower_is_worse ? latest < kDrop * before : latest * kDrop > before + 1e-4) {
      seen.assign(1, latest);  // a change: what came before no longer describes the link
      return latest;
    }
  }
  std::vector<double> now = seen;
  std::sort(now.begin(), now.end());
  return now[(now.size() - 1) / 2];
}

bool probed(const std::vector<StageReport>& reports, const std::vector<StageMeasurement>& prior) {
  return !reports.empty() && reports.size() == prior.size() &&
         std::all_of(reports.begin(), reports.end(),
                     [](const StageReport& r) { return r.forward_s + r.backward_s <= 0; });
}

void with_prior(std::vector<StageReport>& reports, const std::vector<StageMeasurement>& prior) {
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const StageMeasurement& s = prior[r];
    reports[r].forward_s = s.forward_s;
    reports[r].backward_s = s.backward_s;
    reports[r].send_s = s.send_s;
    reports[r].iteration_cost_s = s.iteration_cost_s;
    reports[r].message_bytes = s.activation_bytes;
    reports[r].stash_bytes = s.stash_bytes;
  }
}

}  // namespace contend::pipeline::detail
