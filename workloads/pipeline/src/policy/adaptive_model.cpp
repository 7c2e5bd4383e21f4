// The adaptive controller's model of the pipeline: its measurements as the simulator's
// configuration, and Adaptra's estimate of the slack a link needs.

#include "policy/adaptive_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace contend::pipeline {

double cycle_s(const Measurements& m) {
  double cycle = 0;
  for (const StageMeasurement& s : m.stages) {
    cycle = std::max(cycle, s.forward_s + s.backward_s);
  }
  return cycle;
}

double message_s(const Measurements& m, int r, double bps) {
  return bps > 0 && std::isfinite(bps) ? 8.0 * static_cast<double>(m.stages[r].activation_bytes) / bps : 0.0;
}

sim::SimConfig simulator_config(const Measurements& m, int stages, int chunks, std::vector<double>& link_bps) {
  sim::SimConfig config;
  config.blocking_sends = m.blocking_sends;
  const double v = std::max(1, chunks);
  for (int st = 0; st < stages * std::max(1, chunks); ++st) {
    const StageMeasurement& s = m.stages[st % stages];
    config.stages.push_back({s.forward_s / v, s.backward_s / v, s.activation_bytes, s.activation_bytes,
                             static_cast<std::uint64_t>(static_cast<double>(s.stash_bytes) / v), 0.5});
  }
  for (const StageMeasurement& s : m.stages) {
    config.costs.push_back({s.send_s, s.iteration_cost_s});
  }
  const double unlimited = std::numeric_limits<double>::infinity();
  for (int r = 0; r + 1 < stages; ++r) {
    const LinkMeasurement& l = m.links[r];
    sim::LinkModel link;
    link.latency_s = l.latency_s;
    link.burst_bytes = RateTrace::constant(static_cast<double>(l.burst_bytes));
    link.stall_s = RateTrace::constant(l.stall_s);
    link.stall_slots = m.stall_slots;
    link.stall_overlaps_wire = m.stall_overlaps_wire;
    if (r < static_cast<int>(m.link_traces.size())) {
      const auto follow = [&](const RateTrace& trace) {
        link.rate = trace;
        if (m.burst_of) {
          link.burst_bytes = trace.map([&](double bps) { return m.burst_of(r, bps); });
        }
      };
      follow(m.link_traces[r]);
      config.links[{r, r + 1}] = link;
      follow(r < static_cast<int>(m.link_traces_back.size()) ? m.link_traces_back[r] : m.link_traces[r]);
      config.links[{r + 1, r}] = link;
      const double now = link.rate.rate_at(0);
      link_bps.push_back(std::isfinite(now) ? now : 0.0);  // 0: unlimited, as an unmeasured link
      continue;
    }
    link.rate = RateTrace::constant(l.goodput_bps > 0 ? l.goodput_bps : unlimited);
    config.links[{r, r + 1}] = link;
    const double back = l.backward_bps > 0 ? l.backward_bps : l.goodput_bps;
    link.rate = RateTrace::constant(back > 0 ? back : unlimited);
    config.links[{r + 1, r}] = link;
    link_bps.push_back(l.goodput_bps);
  }
  return config;
}

double round_trip_s(const Measurements& m, int r) {
  const LinkMeasurement& l = m.links[r];
  const RateTrace* trace = r < static_cast<int>(m.link_traces.size()) ? &m.link_traces[r] : nullptr;
  const RateTrace* back = r < static_cast<int>(m.link_traces_back.size()) ? &m.link_traces_back[r] : trace;
  const double forward = trace != nullptr ? trace->rate_at(0) : l.goodput_bps;
  const double backward = back != nullptr ? back->rate_at(0) : (l.backward_bps > 0 ? l.backward_bps : l.goodput_bps);
  return 2 * (l.latency_s + l.stall_s) + message_s(m, r, forward) + message_s(m, r, backward);
}

std::vector<int> slack_estimate(const Measurements& m, int only_link) {
  const int p = static_cast<int>(m.stages.size());
  const double cycle = cycle_s(m);
  std::vector<int> extra(p, 0);
  double behind = 0;  // what the links from stage s to the last add to a round trip
  for (int s = p - 1; s >= 0 && cycle > 0; --s) {
    if (s < static_cast<int>(m.links.size()) && (only_link < 0 || only_link == s)) {
      behind += round_trip_s(m, s);
    }
    extra[s] = static_cast<int>(std::min(1e6, std::ceil(behind / cycle - 1e-9)));
  }
  return extra;
}

int slowest_link(const Measurements& m) {
  int slowest = -1;
  double most = 0;
  for (int r = 0; r < static_cast<int>(m.links.size()); ++r) {
    if (const double t = round_trip_s(m, r); t > most) {
      most = t;
      slowest = r;
    }
  }
  return slowest;
}

std::vector<int> pipemorph_warmups(const std::vector<double>& forward_s, const std::vector<double>& delay_s,
                                   int microbatches) {
  const int p = static_cast<int>(forward_s.size());
  std::vector<int> w(p, 1);
  for (int i = p - 2; i >= 0; --i) {
    const double delay = i < static_cast<int>(delay_s.size()) ? delay_s[i] : 0.0;
    const double hops = forward_s[i] > 0 ? std::ceil(delay / forward_s[i] - 1e-9) : 0.0;
    w[i] = static_cast<int>(std::min<double>(microbatches, w[i + 1] + std::min(hops, 1e6) + 2));
  }
  for (int& x : w) {
    x = std::min(x, microbatches);
  }
  return w;
}

std::vector<int> pipemorph_extra(const Measurements& m, int microbatches) {
  const int p = static_cast<int>(m.stages.size());
  std::vector<double> forward;
  std::vector<double> delay;
  for (const StageMeasurement& s : m.stages) {
    forward.push_back(s.forward_s);
  }
  for (const LinkMeasurement& l : m.links) {
    delay.push_back(l.stall_s);
  }
  const std::vector<int> w = pipemorph_warmups(forward, delay, microbatches);
  std::vector<int> extra;
  for (int r = 0; r < p; ++r) {
    extra.push_back(std::max(0, w[r] - 1 - (p - 1 - r)));
  }
  return extra;
}

std::vector<int> pipemorph_extra_within(const Measurements& m, int microbatches,
                                        const std::function<bool(const std::vector<int>&)>& fits) {
  const auto rule_at = [&](double share) {
    Measurements scaled = m;
    for (LinkMeasurement& l : scaled.links) {
      l.stall_s *= share;
    }
    return pipemorph_extra(scaled, microbatches);
  };
  if (std::vector<int> extra = rule_at(1.0); fits(extra)) {
    return extra;
  }
  if (!fits(rule_at(0.0))) {
    return std::vector<int>(m.stages.size(), 0);
  }
  double lo = 0.0;  // its slack fits
  double hi = 1.0;  // does not
  for (int i = 0; i < 20; ++i) {
    const double mid = (lo + hi) / 2;
    (fits(rule_at(mid)) ? lo : hi) = mid;
  }
  return rule_at(lo);
}

Measurements at_drop(const Measurements& m) {
  Measurements drop = m;
  for (std::size_t r = 0; r < drop.links.size(); ++r) {
    if (r < m.drop_bps.size()) {
      drop.links[r].goodput_bps = m.drop_bps[r];
      drop.links[r].backward_bps = m.drop_bps[r];
    }
    if (r < m.drop_stall_s.size()) {
      drop.links[r].stall_s = std::max(drop.links[r].stall_s, m.drop_stall_s[r]);
    }
  }
  return drop;
}

}  // namespace contend::pipeline
