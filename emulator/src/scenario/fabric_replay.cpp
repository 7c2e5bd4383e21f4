// The timeline replayed at the flow level with its closed-loop jobs (predict_run): a fluid model
// of each job's iterations, the shares recomputed at every change of what sends.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "contend/emulator/scenario/fabric_flows.h"
#include "scenario/fabric_state.h"

namespace contend::emulator {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct JobFlow {
  FlowSpec spec;
  double send_at_s = 0;  // computing until then
  double left_bits = 0;  // what it has still to send this iteration
  double rate_bps = 0;   // its share while it sends, at the last prediction
  double sent_bits = 0;  // over the run
};

struct Job {
  std::string name;
  double compute_s = 0;
  double bits = 0;      // each flow's, per iteration
  double period_s = 0;  // its slots' (0: none)
  double origin_s = 0;  // its start: slot 0
  double last_end_s = 0;
  std::vector<JobFlow> flows;
  std::vector<double> iterations_s;
  bool unbounded = false;  // its iterations would take no time: left out
};

bool sending(const JobFlow& f, double t) {
  return f.send_at_s <= t && f.left_bits > 0;
}

// The jobs of a replay: who joins and leaves, who sends, when the next of them changes.
class Jobs {
 public:
  // A closed-loop flow's start or stop, applied to its job; false for every other event.
  bool apply(const Event& e, double t) {
    if (const auto* start = std::get_if<FlowStart>(&e.action); start != nullptr && start->flow.iterate_bytes > 0) {
      join(start->flow, t);
      return true;
    }
    if (const auto* stop = std::get_if<FlowStop>(&e.action)) {
      return leave(stop->flow.name);
    }
    return false;
  }

  // Iterations that ended at `t` recorded and begun again; whether a flow began or ended sending.
  // The flows that send at `t` are then senders().
  bool settle(double t) {
    bool changed = false;
    for (Job& job : jobs_) {
      if (job.unbounded || job.flows.empty()) {
        continue;
      }
      const bool done =
          std::all_of(job.flows.begin(), job.flows.end(), [](const JobFlow& f) { return f.left_bits <= 0; });
      if (done) {
        end_iteration(job, t);
        changed = true;
      }
    }
    std::vector<JobFlow*> now;
    for (Job& job : jobs_) {
      for (JobFlow& f : job.flows) {
        if (!job.unbounded && sending(f, t)) {
          now.push_back(&f);
        }
      }
    }
    changed = changed || now != sending_;
    sending_ = std::move(now);
    return changed;
  }

  // Every flow that sends, as settle() found them.
  std::vector<const FlowSpec*> senders() const {
    std::vector<const FlowSpec*> out;
    for (const JobFlow* f : sending_) {
      out.push_back(&f->spec);
    }
    return out;
  }

  // The senders' shares, in their order from `rates[first]` on.
  void take_rates(const std::vector<double>& rates, std::size_t first) {
    for (JobFlow* f : sending_) {
      f->rate_bps = rates[first++];
    }
  }

  // The next time a flow begins or ends sending (kNever when none will).
  double next_change(double t) const {
    double next = kNever;
    for (const Job& job : jobs_) {
      for (const JobFlow& f : job.flows) {
        if (job.unbounded || f.left_bits <= 0) {
          continue;
        }
        if (f.send_at_s > t) {
          next = std::min(next, f.send_at_s);
        } else if (f.rate_bps > 0) {
          next = std::min(next, t + f.left_bits / f.rate_bps);
        }
      }
    }
    return next;
  }

  // What the senders deliver from `t` to `until` counted.
  void deliver(double t, double until) {
    for (JobFlow* f : sending_) {
      f->sent_bits += f->rate_bps * (until - t);
    }
  }

  // The senders' bits from `t` to the next change, `until`, taken from what they have to send.
  void advance(double t, double until) {
    for (JobFlow* f : sending_) {
      const double bps = f->rate_bps;
      const bool through = bps > 0 && t + f->left_bits / bps <= until * (1 + 1e-12) + 1e-12;
      f->left_bits = through ? 0 : f->left_bits - bps * (until - t);
    }
  }

  std::vector<PredictedJob> predicted() const {
    std::vector<PredictedJob> out;
    for (const Job& job : jobs_) {
      out.push_back({job.name, job.iterations_s});
    }
    return out;
  }

  // What each flow delivered, by name (a flow started again: all its runs').
  void add_bits(std::map<std::string, double>& bits) const {
    for (const auto& [flow, sent] : gone_bits_) {
      bits[flow] += sent;
    }
    for (const Job& job : jobs_) {
      for (const JobFlow& f : job.flows) {
        bits[f.spec.name] += f.sent_bits;
      }
    }
  }

 private:
  void join(const FlowSpec& f, double t) {
    sending_.clear();  // its pointers may move; settle() finds the senders again
    leave(f.name);     // a flow started again takes its old one's place
    auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.name == f.job; });
    if (it == jobs_.end()) {
      jobs_.push_back({f.job,
                       f.iterate_compute_s,
                       8.0 * static_cast<double>(f.iterate_bytes),
                       f.iterate_period_s,
                       t,
                       t,
                       {},
                       {},
                       false});
      it = jobs_.end() - 1;
    } else if (it->flows.empty()) {
      it->origin_s = t;  // started again
      it->last_end_s = t;
    }
    it->flows.push_back({f, t + it->compute_s, it->bits});
  }

  bool leave(const std::string& flow) {
    for (Job& job : jobs_) {
      const auto it =
          std::find_if(job.flows.begin(), job.flows.end(), [&](const JobFlow& f) { return f.spec.name == flow; });
      if (it != job.flows.end()) {
        sending_.clear();  // its pointers may move; settle() finds the senders again
        gone_bits_[flow] += it->sent_bits;
        job.flows.erase(it);
        return true;
      }
    }
    return false;
  }

  // The iteration ended at `t` (its time since the one before ended) and the next begun: at
  // once, or at the job's next slot.
  void end_iteration(Job& job, double t) {
    if (t - job.last_end_s <= 0 && job.compute_s <= 0) {
      job.unbounded = true;  // through unshaped ports without compute: no time at all
      return;
    }
    job.iterations_s.push_back(t - job.last_end_s);
    job.last_end_s = t;
    const double begin = job.period_s > 0 ? next_job_slot_s(job.origin_s, t, job.period_s) : t;
    for (JobFlow& f : job.flows) {
      f.send_at_s = begin + job.compute_s;
      f.left_bits = job.bits;
    }
  }

  std::vector<Job> jobs_;
  std::vector<JobFlow*> sending_;            // at the last settle
  std::map<std::string, double> gone_bits_;  // what flows that left delivered
};

// The rates at `t` of now's flows and the senders', in that order (0: no path joins a flow's
// hosts); the whole prediction added to `timeline` when one is kept.
std::vector<double> rates_at(const Scenario& s, const detail::FabricState& now, double t, detail::FabricCache& cache,
                             const std::vector<const FlowSpec*>& senders, std::vector<FabricPrediction>* timeline) {
  if (timeline == nullptr) {
    return detail::predict_rates(s, now, cache, senders);
  }
  std::vector<double> rates;
  timeline->push_back(detail::predict_state(s, now, t, &cache, senders, &rates));
  return rates;
}

// Each watched flow's rate at `t` appended where it changed: its share among now's flows (whose
// rates are `open`), 0 when it is not running.
void watch(const std::vector<std::string>& watched, const detail::FabricState& now, const std::vector<double>& open,
           double t, std::map<std::string, std::vector<std::pair<double, double>>>& rates) {
  for (const std::string& name : watched) {
    double bps = 0;
    for (std::size_t k = 0; k < now.flows.size(); ++k) {
      bps = now.flows[k].name == name ? open[k] : bps;
    }
    auto& points = rates[name];
    if (points.empty() || points.back().second != bps) {
      points.emplace_back(t, bps);
    }
  }
}

}  // namespace

namespace detail {

PredictedRun replay(const Scenario& s, const Keep& keep, FabricCache& cache) {
  FabricState now = initial_state(s);
  Jobs jobs;
  std::vector<double> open;  // the open-loop flows' rates (now.flows')
  PredictedRun out;
  std::size_t i = 0;
  bool first = true;
  for (double t = 0;;) {
    bool changed = first;
    first = false;
    for (; i < s.events.size() && s.events[i].at_s <= t; ++i) {
      changed = jobs.apply(s.events[i], t) || apply(now, s.events[i]) || changed;
    }
    changed = jobs.settle(t) || changed;
    if (changed) {
      const bool whole = keep.timeline || (out.timeline.empty() && !keep.watched.empty());
      const std::vector<double> rates = rates_at(s, now, t, cache, jobs.senders(), whole ? &out.timeline : nullptr);
      open.assign(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(now.flows.size()));
      jobs.take_rates(rates, now.flows.size());
      watch(keep.watched, now, open, t, out.rates);
    }
    const double next = std::min(i < s.events.size() ? s.events[i].at_s : kNever, jobs.next_change(t));
    const double until = std::min(next, s.duration_s);
    for (std::size_t k = 0; k < open.size(); ++k) {
      out.bits[now.flows[k].name] += open[k] * (until - t);
    }
    jobs.deliver(t, until);
    if (!(next < s.duration_s)) {
      break;
    }
    jobs.advance(t, next);
    t = next;
  }
  out.jobs = jobs.predicted();
  jobs.add_bits(out.bits);
  return out;
}

}  // namespace detail

PredictedRun predict_run(const Scenario& s, bool timeline) {
  detail::FabricCache cache;
  return detail::replay(s, detail::Keep{timeline, {}}, cache);
}

PredictedRun predict_watching(const Scenario& s, const std::vector<std::string>& watched) {
  detail::FabricCache cache;
  return detail::replay(s, detail::Keep{false, watched}, cache);
}

std::vector<FabricPrediction> predict_timeline(const Scenario& s) {
  return predict_run(s).timeline;
}

}  // namespace contend::emulator
