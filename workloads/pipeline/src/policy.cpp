#include "contend/pipeline/policy.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "contend/common/units.h"

namespace contend::pipeline {
namespace {

Result<double> number(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || v < 0) {
    return make_error(Errc::kInvalidArgument,
                      "policy option " + key + ": expected a non-negative number, got \"" + value + "\"");
  }
  return v;
}

Result<void> set_option(PolicySpec& spec, const std::string& key, const std::string& value) {
  if (key == "mem") {
    auto bytes = parse_size_bytes(value);
    if (!bytes) {
      return with_context(bytes.error(), "policy option mem");
    }
    spec.options.memory_limit_bytes = *bytes;
    return {};
  }
  auto v = number(key, value);
  if (!v) {
    return v.error();
  }
  const int whole = static_cast<int>(*v);
  if (key == "k" && spec.kind == "fixed" && whole >= 1) {
    spec.k = whole;
  } else if (key == "kmin" && spec.kind != "fixed" && whole >= 1) {
    spec.options.k_min = whole;
  } else if (key == "kmax" && spec.kind != "fixed") {
    spec.options.k_max = whole;
  } else if (key == "inflight" && spec.kind != "fixed") {
    spec.options.max_inflight = whole;
  } else if (key == "period" && spec.kind != "fixed" && whole >= 1) {
    spec.options.period = whole;
  } else if (key == "hysteresis" && spec.kind != "fixed" && *v < 1) {
    spec.options.hysteresis = *v;
  } else if (key == "lean" && spec.kind != "fixed" && *v < 1) {
    spec.options.lean = *v;
  } else {
    return make_error(Errc::kInvalidArgument,
                      "policy " + spec.kind + ": bad option " + key + "=" + value +
                          (spec.kind == "fixed" ? " (fixed takes k=N, N >= 1)"
                                                : " (options: kmin>=1, kmax, mem=SIZE, inflight, period>=1, "
                                                  "hysteresis<1, lean<1)"));
  }
  return {};
}

// Rank 0's view of the links from every rank's report, per direction: the sustained rate (second
// halves of the iteration's last frames, so a change late in an iteration counts) and the burst
// the token bucket gave on top, as the last iteration measured them. No smoothing across
// iterations: the last frames already average four transfers, the controller's hysteresis keeps
// noise from moving k, and any lag costs throughput both ways (after a preemption the best k may
// be smaller or larger than during it).
class LinkEstimates {
 public:
  explicit LinkEstimates(int stages) : links_(stages > 1 ? stages - 1 : 0) {}
  void add(const std::vector<StageReport>& reports) {
    for (std::size_t r = 0; r + 1 < reports.size(); ++r) {
      add(links_[r].forward, reports[r + 1].from_prev);
      add(links_[r].backward, reports[r].from_next);
    }
  }
  Measurements measurements(const std::vector<StageReport>& reports) const {
    Measurements m;
    for (const StageReport& s : reports) {
      m.stages.push_back({s.forward_s, s.backward_s, s.message_bytes, s.stash_bytes});
    }
    for (const Link& link : links_) {
      LinkMeasurement l;
      l.goodput_bps = link.forward.rate;
      l.backward_bps = link.backward.rate;
      l.burst_bytes = static_cast<std::uint64_t>(std::max(0.0, link.forward.burst));
      m.links.push_back(l);
    }
    return m;
  }

 private:
  struct Direction {
    double rate = 0;  // bits per second; 0 until measured
    double burst = 0;
  };
  struct Link {
    Direction forward;
    Direction backward;
  };
  static void add(Direction& d, const TransferTotals& t) {
    if (t.frames > 0 && t.recent_seconds > 0) {
      d.rate = 8.0 * static_cast<double>(t.recent_bytes) / t.recent_seconds;
      d.burst = t.recent_burst_bytes;
    }
  }
  std::vector<Link> links_;
};

class FixedPolicy : public KPolicy {
 public:
  explicit FixedPolicy(int k) : k_(k) {}
  Result<Decision> decide(int iteration, const std::vector<StageReport>&) override {
    Decision d;
    d.iteration = iteration;
    d.k = k_;
    return d;
  }

 private:
  int k_;
};

class AdaptivePolicy : public KPolicy {
 public:
  AdaptivePolicy(int stages, int microbatches, AdaptiveOptions options, std::optional<OracleTruth> truth)
      : controller_(stages, microbatches, options), links_(stages), truth_(std::move(truth)) {}

  Result<Decision> decide(int iteration, const std::vector<StageReport>& reports) override {
    if (reports.empty()) {
      // Nothing measured yet: the leanest k, until the first iteration says more.
      Decision d;
      d.iteration = iteration;
      d.k = controller_.k();
      return d;
    }
    links_.add(reports);
    Measurements m = links_.measurements(reports);
    if (truth_) {
      const double now = truth_->now_s();
      for (std::size_t r = 0; r < truth_->links.size(); ++r) {
        m.link_traces.push_back(truth_->links[r].from(now));
        if (truth_->burst_bytes) {
          m.links[r].burst_bytes = truth_->burst_bytes(truth_->links[r].rate_at(now));
        }
      }
    }
    return controller_.decide(iteration, m);
  }

 private:
  AdaptiveController controller_;
  LinkEstimates links_;
  std::optional<OracleTruth> truth_;
};

}  // namespace

bool is_policy(const std::string& schedule) {
  const std::string head = schedule.substr(0, schedule.find(':'));
  return head == "fixed" || head == "adaptive" || head == "oracle";
}

Result<PolicySpec> parse_policy(const std::string& text) {
  PolicySpec spec;
  const auto colon = text.find(':');
  spec.kind = text.substr(0, colon);
  if (!is_policy(text)) {
    return make_error(Errc::kInvalidArgument,
                      "unknown policy \"" + spec.kind + "\" (known: fixed:k=N, adaptive[:options], oracle[:options])");
  }
  if (spec.kind == "oracle") {
    spec.options.hysteresis = 0;  // the truth needs no protection from noise
  }
  if (colon == std::string::npos) {
    if (spec.kind == "fixed") {
      return make_error(Errc::kInvalidArgument, "policy fixed needs a k: fixed:k=2");
    }
    return spec;
  }
  std::stringstream options(text.substr(colon + 1));
  for (std::string item; std::getline(options, item, ',');) {
    const auto eq = item.find('=');
    std::string key = eq == std::string::npos ? "" : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? item : item.substr(eq + 1);
    if (key.empty() && spec.kind == "fixed") {
      key = "k";
    }
    if (auto ok = set_option(spec, key, value); !ok) {
      return ok.error();
    }
  }
  return spec;
}

Result<std::unique_ptr<KPolicy>> make_policy(const PolicySpec& spec, int stages, int microbatches,
                                             std::optional<OracleTruth> truth) {
  if (spec.kind == "fixed") {
    if (spec.k < 1 || spec.k > microbatches) {
      return make_error(Errc::kInvalidArgument, "fixed:k=" + std::to_string(spec.k) + ": k must be 1.." +
                                                    std::to_string(microbatches) + " (the micro-batches)");
    }
    return std::unique_ptr<KPolicy>(std::make_unique<FixedPolicy>(spec.k));
  }
  if (spec.kind == "oracle") {
    if (!truth || static_cast<int>(truth->links.size()) != stages - 1 || !truth->now_s) {
      return make_error(Errc::kInvalidArgument, "the oracle policy needs the scenario's rate of each of the " +
                                                    std::to_string(stages - 1) +
                                                    " links and its clock (an experiment's scenario)");
    }
  } else {
    truth.reset();
  }
  return std::unique_ptr<KPolicy>(std::make_unique<AdaptivePolicy>(stages, microbatches, spec.options, truth));
}

}  // namespace contend::pipeline
