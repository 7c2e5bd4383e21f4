// The timeline replayed at the flow level with its closed-loop jobs (predict_run): a fluid model
// of each job's iterations, the shares recomputed at every change of what sends.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "contend/emulator/scenario/fabric_flows.h"
#include "scenario/fabric_state.h"

namespace contend::emulator {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Each flow's rate in a prediction, by name.
using Rates = std::unordered_map<std::string, double>;

Rates rates_of(const FabricPrediction& p) {
  Rates out;
  for (const PredictedFlow& f : p.flows) {
    out.emplace(f.name, f.rate_bps);
  }
  return out;
}

struct JobFlow {
  FlowSpec spec;
  double send_at_s = 0;  // computing until then
  double left_bits = 0;  // what it has still to send this iteration
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
    std::vector<std::string> now;
    for (const FlowSpec* f : senders(t)) {
      now.push_back(f->name);
    }
    changed = changed || now != sending_;
    sending_ = std::move(now);
    return changed;
  }

  // Every flow that sends at `t`.
  std::vector<const FlowSpec*> senders(double t) const {
    std::vector<const FlowSpec*> out;
    for (const Job& job : jobs_) {
      for (const JobFlow& f : job.flows) {
        if (!job.unbounded && sending(f, t)) {
          out.push_back(&f.spec);
        }
      }
    }
    return out;
  }

  // The next time a flow begins or ends sending at `rates` (kNever when none will).
  double next_change(const Rates& rates, double t) const {
    double next = kNever;
    for (const Job& job : jobs_) {
      for (const JobFlow& f : job.flows) {
        if (job.unbounded || f.left_bits <= 0) {
          continue;
        }
        if (f.send_at_s > t) {
          next = std::min(next, f.send_at_s);
        } else if (const double bps = rate_of(rates, f.spec.name); bps > 0) {
          next = std::min(next, t + f.left_bits / bps);
        }
      }
    }
    return next;
  }

  // Every sending flow's bits from `t` to `until` at `rates`.
  void advance(const Rates& rates, double t, double until) {
    for (Job& job : jobs_) {
      for (JobFlow& f : job.flows) {
        if (!job.unbounded && sending(f, t)) {
          const double bps = rate_of(rates, f.spec.name);
          const bool through = bps > 0 && t + f.left_bits / bps <= until * (1 + 1e-12) + 1e-12;
          f.left_bits = through ? 0 : f.left_bits - bps * (until - t);
        }
      }
    }
  }

  std::vector<PredictedJob> predicted() const {
    std::vector<PredictedJob> out;
    for (const Job& job : jobs_) {
      out.push_back({job.name, job.iterations_s});
    }
    return out;
  }

 private:
  void join(const FlowSpec& f, double t) {
    leave(f.name);  // a flow started again takes its old one's place
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
      if (std::erase_if(job.flows, [&](const JobFlow& f) { return f.spec.name == flow; }) > 0) {
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

  static double rate_of(const Rates& rates, const std::string& flow) {
    const auto it = rates.find(flow);
    return it == rates.end() ? 0 : it->second;
  }

  std::vector<Job> jobs_;
  std::vector<std::string> sending_;  // the flows sending at the last settle
};

}  // namespace

PredictedRun predict_run(const Scenario& s, bool timeline) {
  detail::FabricState now = detail::initial_state(s);
  detail::FabricCache cache;
  cache.rates_only = !timeline;
  Jobs jobs;
  Rates rates;
  Rates bits;  // by flow, moved into `out` at the end
  PredictedRun out;
  std::size_t i = 0;
  for (double t = 0;;) {
    bool changed = out.timeline.empty();
    for (; i < s.events.size() && s.events[i].at_s <= t; ++i) {
      changed = jobs.apply(s.events[i], t) || detail::apply(now, s.events[i]) || changed;
    }
    changed = jobs.settle(t) || changed;
    if (changed) {
      FabricPrediction p = detail::predict_state(s, now, t, &cache, jobs.senders(t));
      rates = rates_of(p);
      if (timeline || out.timeline.empty()) {
        out.timeline.push_back(std::move(p));
      }
    }
    const double next = std::min(i < s.events.size() ? s.events[i].at_s : kNever, jobs.next_change(rates, t));
    const double until = std::min(next, s.duration_s);
    for (const auto& [flow, bps] : rates) {
      bits[flow] += bps * (until - t);
    }
    if (!(next < s.duration_s)) {
      break;
    }
    jobs.advance(rates, t, next);
    t = next;
  }
  out.jobs = jobs.predicted();
  out.bits.insert(bits.begin(), bits.end());
  if (!timeline) {
    out.timeline.clear();
  }
  return out;
}

std::vector<FabricPrediction> predict_timeline(const Scenario& s) {
  return predict_run(s).timeline;
}

}  // namespace contend::emulator
