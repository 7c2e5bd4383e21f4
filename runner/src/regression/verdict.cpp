#include "contend/runner/regression/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace contend::runner {
namespace {

constexpr int kExactMax = 50;  // values per side up to which U's distribution is counted exactly

// U's distribution for samples of n and m values with no ties: P(U <= u) for u = 0..n*m, where
// U counts the pairs in which the m-side value is the larger. Counted by the last (largest)
// value: an m-side value there is larger than all n, an n-side value than none.
std::vector<double> u_cdf(int n, int m) {
  const int top = n * m;
  std::vector<std::vector<double>> prev(m + 1, std::vector<double>(top + 1, 0.0));
  std::vector<std::vector<double>> cur = prev;
  for (int i = 0; i <= n; ++i) {
    for (int j = 0; j <= m; ++j) {
      std::fill(cur[j].begin(), cur[j].end(), 0.0);
      if (i == 0 || j == 0) {
        cur[j][0] = 1;
        continue;
      }
      for (int u = 0; u <= i * j; ++u) {
        cur[j][u] = prev[j][u] + (u >= i ? cur[j - 1][u - i] : 0.0);
      }
    }
    std::swap(prev, cur);
  }
  std::vector<double> cdf(top + 1);
  double total = 0;
  for (int u = 0; u <= top; ++u) {
    total += prev[m][u];
    cdf[u] = total;
  }
  for (double& c : cdf) {
    c /= total;
  }
  return cdf;
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

// P(U <= u) for either size: exact when both sides are small, else the normal approximation
// with the continuity correction.
struct UDistribution {
  int n, m;
  std::vector<double> cdf;  // empty: normal
  UDistribution(int n_, int m_) : n(n_), m(m_) {
    if (n <= kExactMax && m <= kExactMax) {
      cdf = u_cdf(n, m);
    }
  }
  double at_most(double u) const {
    if (u < 0) {
      return 0;
    }
    if (!cdf.empty()) {
      return cdf[std::min<std::size_t>(static_cast<std::size_t>(std::floor(u)), cdf.size() - 1)];
    }
    const double mean = n * m / 2.0;
    const double sd = std::sqrt(n * m * (n + m + 1) / 12.0);
    return normal_cdf((std::floor(u) + 0.5 - mean) / sd);
  }
};

// U of `now` against `reference`: pairs in which now's value is larger, ties counting a half.
double u_statistic(const std::vector<double>& reference, const std::vector<double>& now) {
  double u = 0;
  for (double x : reference) {
    for (double y : now) {
      u += y > x ? 1.0 : y == x ? 0.5 : 0.0;
    }
  }
  return u;
}

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

const CellSummary* find_cell(const Summary& s, const std::string& scenario, const std::string& schedule) {
  for (const CellSummary& c : s.cells) {
    if (c.scenario == scenario && c.schedule == schedule) {
      return &c;
    }
  }
  return nullptr;
}

// The loss a cell may show unflagged: the tolerance, or the reference runs' drift if larger.
double allowed(const Verdict& v, const VerdictOptions& o) {
  return std::max(o.tolerance, v.drift);
}

std::string allowance_name(const Verdict& v, const VerdictOptions& o) {
  if (v.drift > o.tolerance) {
    return "the " + pct(v.drift) + " the reference runs' own drift allows (wider than the " + pct(o.tolerance) +
           " tolerance; more reference runs narrow it)";
  }
  return "the " + pct(o.tolerance) + " tolerance";
}

// The verdict of two samples' shift: significance, then whether the tolerance is resolved.
void judge(Verdict& v, const VerdictOptions& o) {
  const Shift& s = v.shift;
  const int n = static_cast<int>(v.reference.size());
  const int m = static_cast<int>(v.now.size());
  if (o.paired && (n != m || n < 2)) {
    v.change = Change::kUnresolved;
    v.why = n != m ? std::to_string(n) + " repetitions in the reference and " + std::to_string(m) +
                         " now are not pairs: run as many of each"
                   : "one pair cannot be tested: run 2 or more";
    return;
  }
  if (!o.paired && !s.exact && smallest_p(n, m) >= o.alpha) {
    v.change = Change::kUnresolved;
    v.why = std::to_string(n) + " and " + std::to_string(m) + " repetitions can never give p < " +
            std::to_string(o.alpha).substr(0, 4) +
            ": run at least 4 of each (5 of each to resolve a tolerance through the noise)";
    return;
  }
  const double loss_bound = 1 - s.low;  // the largest loss the interval allows
  if (s.p < o.alpha) {
    v.change = s.ratio < 1 ? Change::kSlower : Change::kFaster;
    const std::string by = (s.ratio < 1 ? "slower by " : "faster by ") + pct(std::abs(1 - s.ratio));
    if (v.change == Change::kSlower) {
      v.fails = 1 - s.ratio > allowed(v, o);
      v.why = by + " (up to " + pct(loss_bound) + "), " + (v.fails ? "beyond " : "within ") + allowance_name(v, o);
    } else {
      v.why = by;
    }
    return;
  }
  if (loss_bound > allowed(v, o)) {
    v.change = Change::kUnresolved;
    v.why = "no significant change, but the noise allows a loss of up to " + pct(loss_bound) + ", beyond " +
            allowance_name(v, o) + ": more repetitions";
    return;
  }
  v.change = Change::kSame;
  v.why = "no significant change (p " + std::to_string(s.p).substr(0, 5) + ")";
}

// How far below `middle` (the pool's median) a further run's median of the cell's values may lie,
// as a share of it: down to the lower end of the 95% prediction interval from the k runs' medians
// (those above 0), their mean - t s sqrt(1 + 1/k) (ci95 sqrt(k + 1)); 0 for fewer than three runs
// (with two, t is 12.7: an interval that would let nearly any loss pass).
double drift_of(const std::vector<Summary>& runs, const CellSummary& cell, Quantity q, double middle) {
  std::vector<double> medians;
  for (const Summary& run : runs) {
    const CellSummary* c = find_cell(run, cell.scenario, cell.schedule);
    const std::vector<double> values = c == nullptr ? std::vector<double>{} : values_of(run, *c, q);
    const double median = values.empty() ? 0 : stats_of(values).median;
    if (median > 0) {
      medians.push_back(median);
    }
  }
  if (medians.size() < 3 || !(middle > 0)) {
    return 0;
  }
  const Stats s = stats_of(medians);
  return std::clamp(1 - (s.mean - s.ci95 * std::sqrt(s.n + 1.0)) / middle, 0.0, 1.0);
}

// The verdict of one cell of the reference, its shift measured, not yet judged; `drift` the
// reference runs' own.
Verdict measured(const Summary& now, const Summary& reference, const CellSummary& ref, double drift,
                 const VerdictOptions& o) {
  Verdict v;
  v.scenario = ref.scenario;
  v.schedule = ref.schedule;
  v.drift = drift;
  v.reference = values_of(reference, ref, o.quantity);
  const CellSummary* cur = find_cell(now, ref.scenario, ref.schedule);
  if (cur != nullptr) {
    v.now = values_of(now, *cur, o.quantity);
  }
  if (v.now.empty() || v.reference.empty()) {
    v.change = Change::kMissing;
    v.fails = true;
    v.why = v.now.empty() ? "missing from this run" : "no values in the reference";
  } else {
    v.shift = o.paired ? paired_shift_of(v.reference, v.now, o.alpha) : shift_of(v.reference, v.now, o.alpha);
  }
  return v;
}

// Holm's step-down over the cells tested (not the missing, the exact, nor those whose sizes allow
// no test): the k-th smallest p times the cells left from it (m - k + 1), never below the one
// before, at most 1.
void holm(std::vector<Verdict>& v) {
  std::vector<Verdict*> order;
  for (Verdict& each : v) {
    if (each.change != Change::kMissing && !each.shift.exact && each.shift.confidence > 0) {
      order.push_back(&each);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Verdict* a, const Verdict* b) { return a->shift.p < b->shift.p; });
  double floor = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    double& p = order[k]->shift.p;
    p = std::min(1.0, std::max(floor, p * static_cast<double>(order.size() - k)));
    floor = p;
  }
}

// Every measured cell judged, as one family where the options say so.
std::vector<Verdict> judged(std::vector<Verdict> v, const VerdictOptions& o) {
  if (o.family) {
    holm(v);
  }
  for (Verdict& each : v) {
    if (each.change != Change::kMissing) {
      judge(each, o);
    }
  }
  return v;
}

}  // namespace

double smallest_p(int n, int m) {
  if (n < 1 || m < 1) {
    return 1;
  }
  double ways = 1;  // C(n + m, n)
  for (int i = 1; i <= n; ++i) {
    ways = ways * (m + i) / i;
  }
  return std::min(1.0, 2 / ways);
}

double mann_whitney_p(const std::vector<double>& reference, const std::vector<double>& now) {
  const int n = static_cast<int>(reference.size());
  const int m = static_cast<int>(now.size());
  if (n == 0 || m == 0) {
    return 1;
  }
  const UDistribution d(n, m);
  const double u = u_statistic(reference, now);
  const double lower = d.at_most(u);
  const double upper = 1 - d.at_most(std::ceil(u) - 1);
  return std::min(1.0, 2 * std::min(lower, upper));
}

Shift shift_of(const std::vector<double>& reference, const std::vector<double>& now, double alpha) {
  Shift s;
  std::vector<double> ratios;
  for (double x : reference) {
    for (double y : now) {
      if (x > 0) {
        ratios.push_back(y / x);
      }
    }
  }
  if (ratios.empty()) {
    return s;
  }
  std::sort(ratios.begin(), ratios.end());
  const auto spread = [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end());
  };
  if (spread(reference) == 0 && spread(now) == 0) {
    s.exact = true;
    s.ratio = s.low = s.high = ratios.front();
    s.confidence = 1;
    s.p = s.ratio == 1 ? 1 : 0;
    return s;
  }
  const std::size_t k = ratios.size();
  s.ratio = k % 2 == 1 ? ratios[k / 2] : std::sqrt(ratios[k / 2 - 1] * ratios[k / 2]);
  s.p = mann_whitney_p(reference, now);
  s.low = ratios.front();
  s.high = ratios.back();
  // The interval [d(c+1), d(k-c)] of the sorted ratios covers with 1 - 2 P(U <= c): the largest
  // c with P(U <= c) <= alpha / 2 (Bauer 1972), so that it is the test's own interval.
  const UDistribution d(static_cast<int>(reference.size()), static_cast<int>(now.size()));
  int c = -1;
  while (c + 1 < static_cast<int>(k / 2) && d.at_most(c + 1) <= alpha / 2) {
    ++c;
  }
  if (c >= 0) {
    s.low = ratios[static_cast<std::size_t>(c)];
    s.high = ratios[k - 1 - static_cast<std::size_t>(c)];
    s.confidence = 1 - 2 * d.at_most(c);
  }
  return s;
}

const char* change_name(Change c) {
  switch (c) {
    case Change::kFaster:
      return "faster";
    case Change::kSlower:
      return "slower";
    case Change::kSame:
      return "no change";
    case Change::kUnresolved:
      return "unresolved";
    case Change::kMissing:
      return "missing";
  }
  return "?";
}

const char* quantity_name(Quantity q) {
  return q == Quantity::kThroughput ? "throughput" : "speedup";
}

std::vector<double> values_of(const Summary& s, const CellSummary& cell, Quantity q) {
  if (q == Quantity::kThroughput) {
    return cell.throughput;
  }
  const CellSummary* base = find_cell(s, cell.scenario, s.baseline);
  std::vector<double> out;
  if (base == nullptr || base->throughput.empty()) {
    return out;
  }
  const bool paired = base->throughput.size() == cell.throughput.size();
  for (std::size_t i = 0; i < cell.throughput.size(); ++i) {
    const double b = paired ? base->throughput[i] : base->stats.median;
    if (b > 0) {
      out.push_back(cell.throughput[i] / b);
    }
  }
  return out;
}

Summary pooled(const std::vector<Summary>& runs) {
  Summary out = runs.front();
  for (std::size_t r = 1; r < runs.size(); ++r) {
    for (const CellSummary& c : runs[r].cells) {
      auto it = std::find_if(out.cells.begin(), out.cells.end(), [&c](const CellSummary& mine) {
        return mine.scenario == c.scenario && mine.schedule == c.schedule;
      });
      if (it == out.cells.end()) {
        out.cells.push_back(c);
      } else {
        it->throughput.insert(it->throughput.end(), c.throughput.begin(), c.throughput.end());
      }
    }
  }
  for (CellSummary& c : out.cells) {
    c.stats = stats_of(c.throughput);
  }
  return out;
}

std::vector<Verdict> verdicts(const Summary& now, const Summary& reference, const VerdictOptions& o) {
  std::vector<Verdict> out;
  for (const CellSummary& ref : reference.cells) {
    out.push_back(measured(now, reference, ref, 0, o));
  }
  return judged(std::move(out), o);
}

std::vector<Verdict> verdicts(const Summary& now, const std::vector<Summary>& references, const VerdictOptions& o) {
  if (references.empty()) {
    return {};
  }
  const Summary reference = pooled(references);
  const bool drift = o.quantity == Quantity::kSpeedup;  // throughput: one machine's runs (verdict.h)
  std::vector<Verdict> out;
  for (const CellSummary& ref : reference.cells) {
    const double middle = stats_of(values_of(reference, ref, o.quantity)).median;
    out.push_back(measured(now, reference, ref, drift ? drift_of(references, ref, o.quantity, middle) : 0, o));
  }
  return judged(std::move(out), o);
}

namespace {

const char* test_of(const VerdictOptions& o) {
  return o.paired ? "paired t" : "Mann-Whitney U";
}

}  // namespace

std::string test_name(const VerdictOptions& o) {
  return std::string(test_of(o)) + (o.family ? " (Holm over the cells)" : "");
}

std::string verdict_table(const std::vector<Verdict>& verdicts, const std::string& unit, const VerdictOptions& o) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-14s %-20s %11s %11s %7s %17s %7s %5s  %s\n", "scenario", "schedule", "reference",
                "now", "ratio", "interval", "p", "n", "verdict");
  out << line;
  for (const Verdict& v : verdicts) {
    const Stats r = stats_of(v.reference);
    const Stats n = stats_of(v.now);
    char interval[48] = "-";
    if (v.shift.confidence > 0) {
      std::snprintf(interval, sizeof interval, "[%.3f, %.3f]", v.shift.low, v.shift.high);
    }
    std::snprintf(line, sizeof line, "%-14s %-20s %11.4g %11.4g %7.3f %17s %7.3f %2d+%-2d  %s: %s\n",
                  v.scenario.c_str(), v.schedule.c_str(), r.median, n.median, v.shift.ratio, interval, v.shift.p, r.n,
                  n.n, change_name(v.change), v.why.c_str());
    out << line;
  }
  out << "(medians of the repetitions in " << unit << "; ratio: now over reference, "
      << (o.paired ? "the geometric mean of the pairs' ratios" : "Hodges-Lehmann")
      << ", with its interval; p: " << test_of(o) << ", two-sided"
      << (o.family ? ", Holm-adjusted over the cells tested (each interval the cell's own)" : "") << ")\n";
  return out.str();
}

}  // namespace contend::runner
