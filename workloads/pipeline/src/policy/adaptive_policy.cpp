#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "contend/pipeline/policy/period_predictor.h"

#include "policy/adaptive_model.h"
#include "policy/policies.h"
#include "policy/reports.h"

namespace contend::pipeline::detail {
namespace {

// The runtime's latency per transfer, fitted in band (AdaptiveController::fit_latency) on rank
// 0's measured iteration: only after iterations on steady links (on a changing link the residual
// is the change, not the runtime), and the median of the last kWindow fits, so one disturbed
// iteration does not move it. A link is steady when a message's time at its last frames' rate is
// within kSteady of its time at the iteration's rate, or differs by under kNegligible of the
// stage's forward plus backward (a fast link's bursts move its rate a lot and the time not at all).
class LatencyFit {
 public:
  static bool steady(const std::vector<StageReport>& reports) {
    for (const StageReport& r : reports) {
      const double bytes = static_cast<double>(r.message_bytes);
      for (const TransferTotals* t : {&r.from_prev, &r.from_next}) {
        if (t->frames == 0 || t->tail_bytes == 0 || t->recent_bytes == 0) {
          continue;
        }
        const double whole = bytes * t->tail_seconds / static_cast<double>(t->tail_bytes);  // a message's time
        const double recent = bytes * t->recent_seconds / static_cast<double>(t->recent_bytes);
        const double change = std::abs(recent - whole);
        if (change > kSteady * whole && change > kNegligible * (r.forward_s + r.backward_s)) {
          return false;
        }
      }
    }
    return true;
  }
  void add(double latency_s) {
    fits_.push_back(latency_s);
    if (fits_.size() > kWindow) {
      fits_.erase(fits_.begin());
    }
  }
  double value() const {
    if (fits_.empty()) {
      return 0;
    }
    std::vector<double> sorted = fits_;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    return sorted[sorted.size() / 2];
  }

 private:
  static constexpr double kSteady = 0.1;
  static constexpr double kNegligible = 0.02;
  static constexpr std::size_t kWindow = 5;
  std::vector<double> fits_;
};

// The links' rates and stalls over rank 0's last kWindow decisions, and from them a drop worth
// being ready for (Measurements::drop_bps, drop_stall_s): per link the lowest rate seen, and the
// highest stall seen on any link, when at it some link's message takes longer than now by more
// than kMatters of the slowest stage's forward plus backward (a fast link's bursts move its
// measured rate a lot and a message's time not at all).
class RecentDrops {
 public:
  void apply(Measurements& m) {
    Seen now;
    for (const LinkMeasurement& l : m.links) {
      now.bps.push_back(l.goodput_bps);
      now.stall_s = std::max(now.stall_s, l.stall_s);
    }
    seen_.push_back(now);
    if (seen_.size() > kWindow) {
      seen_.erase(seen_.begin());
    }
    std::vector<double> lowest = now.bps;
    double stall = 0;
    for (const Seen& s : seen_) {
      for (std::size_t r = 0; r < lowest.size() && r < s.bps.size(); ++r) {
        if (s.bps[r] > 0 && (lowest[r] <= 0 || s.bps[r] < lowest[r])) {
          lowest[r] = s.bps[r];
        }
      }
      stall = std::max(stall, s.stall_s);
    }
    const double matters = kMatters * cycle_s(m);
    bool slower = false;
    bool stalled = false;
    for (std::size_t r = 0; r < lowest.size(); ++r) {
      const int link = static_cast<int>(r);
      slower = slower || message_s(m, link, lowest[r]) - message_s(m, link, now.bps[r]) > matters;
      stalled = stalled || stall - m.links[r].stall_s > matters;
    }
    m.drop_bps = slower ? lowest : std::vector<double>{};
    m.drop_stall_s = stalled ? std::vector<double>(lowest.size(), stall) : std::vector<double>{};
  }

 private:
  struct Seen {
    std::vector<double> bps;
    double stall_s = 0;  // the highest on any link
  };
  static constexpr std::size_t kWindow = 10;
  static constexpr double kMatters = 0.05;
  std::vector<Seen> seen_;
};

class AdaptivePolicy : public KPolicy {
 public:
  AdaptivePolicy(const PolicyContext& context, const AdaptiveOptions& options)
      : controller_(context.stages, context.microbatches, options),
        prior_(context.prior),
        sends_(context.sends),
        links_(context.stages),
        truth_(context.truth),
        predict_(options.predict && !(context.truth && context.truth->foresight)),
        history_(std::max(0, context.stages - 1)),
        clock_(context.clock ? context.clock : [] {
          return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
        }) {}

  Result<Decision> decide(int iteration, const std::vector<StageReport>& measured) override {
    std::vector<StageReport> reports = measured;
    const bool probe = probed(reports, prior_);
    if (probe) {
      with_prior(reports, prior_);
    } else if (reports.empty() || reports.front().forward_s + reports.front().backward_s <= 0) {
      // Nothing to model yet: the leanest k, until the first iteration says more.
      Decision d;
      d.iteration = iteration;
      d.k = controller_.k();
      d.schedule = controller_.current();
      return d;
    }
    links_.add(reports);
    Measurements m = links_.measurements(reports);
    m.blocking_sends = sends_.wait;
    m.stall_slots = sends_.delegates;
    m.stall_overlaps_wire = !sends_.sent_when_delivered;
    if (auto ok = fit_latency(reports, iteration, m); !ok) {
      return ok.error();
    }
    const bool predicted = foresee(m, iteration, probe);
    auto d = controller_.decide(iteration, m);
    if (d) {
      d->predicted = predicted && d->evaluated;
    }
    if (probe) {
      controller_.tentative();  // the first measured iteration may say more (the runtime's latency)
    }
    return d;
  }

 private:
  // Fits the runtime's latency to rank 0's measured iteration (when steady) and applies it. The
  // oracle and the observer fit it on the truth over that iteration, what they decide on (the
  // observer's truth of the past is what perfect measurements say of it): what the truth leaves out
  // (TCP's losses around a change, the sockets' waiting) is then in the latency, not dropped with
  // the measured rates it replaces.
  Result<void> fit_latency(const std::vector<StageReport>& reports, int iteration, Measurements& m) {
    const double measured_s = reports.front().iteration_s;
    if (measured_s > 0 && LatencyFit::steady(reports)) {
      Measurements seen = m;
      if (truth_) {
        apply_truth(seen, truth_->now_s() - measured_s, iteration - 1);
      }
      auto fitted = controller_.fit_latency(seen, measured_s);
      if (!fitted) {
        return fitted.error();
      }
      latency_.add(*fitted);
    }
    for (LinkMeasurement& l : m.links) {
      l.latency_s = latency_.value();
    }
    return {};
  }

  // What the links will do: the truth (the oracle), a prediction from a periodic history, or a
  // recent drop to be ready for. The observer first reads the truth as it stands in place of the
  // measurements, then foresees as adaptive does. Returns whether the decision rests on a prediction.
  // The start-up probe's readings stay out of the history: its small tensors time the bucket's burst.
  bool foresee(Measurements& m, int iteration, bool probe) {
    const bool oracle = truth_ && truth_->foresight;
    if (truth_ && !oracle) {
      observe_truth(m, iteration);
    }
    bool predicted = false;
    if (predict_) {
      std::vector<double> rates;
      for (const LinkMeasurement& l : m.links) {
        rates.push_back(l.goodput_bps);
      }
      const double now = clock_();
      if (!probe) {
        history_.record(now, rates);
      }
      if (auto traces = history_.predict(now)) {
        m.link_traces = std::move(*traces);
        m.burst_of = measured_bucket_time(m);
        predicted = true;
      }
    }
    if (oracle) {
      apply_truth(m, truth_->now_s(), iteration);
    } else if (!predicted) {
      drops_.apply(m);
    }
    return predicted;
  }

  // A predicted trace's buckets: each link's measured bucket, which a predicted drop shrinks to
  // the same time of the lower rate (a token bucket's depth is a time at its rate, as tc's buffer
  // is) and a faster rate does not grow: never more burst than was seen.
  static std::function<double(int, double)> measured_bucket_time(const Measurements& m) {
    std::vector<std::pair<double, double>> measured;  // per link: bytes, rate
    for (const LinkMeasurement& l : m.links) {
      measured.emplace_back(static_cast<double>(l.burst_bytes), l.goodput_bps);
    }
    return [measured](int r, double bps) {
      if (r >= static_cast<int>(measured.size())) {
        return 0.0;
      }
      const auto [bytes, at_bps] = measured[r];
      return at_bps > 0 && bps < at_bps ? bytes * bps / at_bps : bytes;
    };
  }

  // The oracle's links for an iteration starting at `start_s` on the scenario's clock: the
  // truth's rates from then on, its token bucket and its stalls, in place of the measured ones.
  void apply_truth(Measurements& m, double start_s, int iteration) const {
    m.link_traces.clear();
    m.link_traces_back.clear();
    if (truth_->burst_bytes) {
      m.burst_of = [of = truth_->burst_bytes](int, double bps) { return static_cast<double>(of(bps)); };
    }
    for (std::size_t r = 0; r < truth_->links.size() && r < m.links.size(); ++r) {
      m.link_traces.push_back(truth_->links[r].from(start_s));
      if (r < truth_->back.size()) {
        m.link_traces_back.push_back(truth_->back[r].from(start_s));
      }
      if (truth_->burst_bytes) {
        m.links[r].burst_bytes = truth_->burst_bytes(truth_->links[r].rate_at(start_s));
      }
      m.links[r].stall_s = r < truth_->stalls.size() ? truth_->stalls[r].at(start_s, std::max(0, iteration)) : 0;
    }
  }

  // The observer's links: each way's rate now, the bucket the shaper gives it, and the stall the
  // iteration just run had (none before the first): what perfect measurements would say. An
  // unshaped way reads as unlimited (the forward's 0, "unmeasured"; the backward's the largest
  // rate, as its 0 means "as the forward"), a way at rate 0 as 1 bit/s, as a reading floors it.
  void observe_truth(Measurements& m, int iteration) const {
    const double now = truth_->now_s();
    const auto reading = [](double bps, double unlimited) { return std::isinf(bps) ? unlimited : std::max(bps, 1.0); };
    for (std::size_t r = 0; r < truth_->links.size() && r < m.links.size(); ++r) {
      LinkMeasurement& l = m.links[r];
      const double bps = truth_->links[r].rate_at(now);
      l.goodput_bps = reading(bps, 0);
      l.backward_bps =
          r < truth_->back.size() ? reading(truth_->back[r].rate_at(now), std::numeric_limits<double>::max()) : 0.0;
      if (truth_->burst_bytes) {
        l.burst_bytes = truth_->burst_bytes(bps);
      }
      l.stall_s = r < truth_->stalls.size() ? truth_->stalls[r].at(now, iteration - 1) : 0;
    }
  }

  AdaptiveController controller_;
  std::vector<StageMeasurement> prior_;
  SendOptions sends_;  // how the runtime sends: the model times candidates alike
  LinkEstimates links_;
  std::optional<OracleTruth> truth_;
  bool predict_;
  PeriodPredictor history_;  // rank 0's own link history
  LatencyFit latency_;
  RecentDrops drops_;
  std::function<double()> clock_;
};

}  // namespace

std::unique_ptr<KPolicy> make_adaptive_policy(const PolicyContext& context, const AdaptiveOptions& options) {
  return std::make_unique<AdaptivePolicy>(context, options);
}

}  // namespace contend::pipeline::detail
