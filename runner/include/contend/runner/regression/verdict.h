#pragma once
// A regression verdict from the repetitions (docs/regression.md): per cell, the ratio of this
// run's values to the reference's (the Hodges-Lehmann estimate: the median of every ratio
// between a value now and one before), its distribution-free interval, and the two-sided
// Mann-Whitney U test of the two samples. Mann-Whitney, not a t-test: repetitions on a shared
// machine are skewed by the odd slow one (steal, a neighbour), and ranks are not moved by it.
// Where the repetitions are pairs, measured side by side (contend ab's rounds), the test is on the
// pairs' ratios (paired_shift_of), and the cells may be judged as a family (Holm's step-down).
// The tolerance is the smallest change that matters: a cell fails when it is significantly
// slower and the estimated loss is beyond the tolerance. Pure.

#include <string>
#include <vector>

#include "contend/runner/results/summary.h"

namespace contend::runner {

struct Shift {
  double ratio = 1;  // Hodges-Lehmann: the median of now_j / reference_i over every pair (paired: see below)
  double low = 0;    // the interval of the ratio, at `confidence`
  double high = 0;
  double confidence = 0;  // what the sizes allow nearest 95% from above; 0 when they allow none
  double p = 1;           // two-sided Mann-Whitney p-value (exact below 50 values per side), or paired t
  // Both sides without spread (a simulated run repeats itself exactly): no noise to test
  // against, the ratio is the change (p 0, or 1 when equal), its interval the ratio itself.
  bool exact = false;
};
// Two-sided p-value of the Mann-Whitney U test (mid-ranks for ties) and the ratio's estimate and
// interval. Requires positive values on both sides.
double mann_whitney_p(const std::vector<double>& reference, const std::vector<double>& now);
Shift shift_of(const std::vector<double>& reference, const std::vector<double>& now, double alpha = 0.05);
// The smallest two-sided p-value samples of these sizes can give: 2 / C(n + m, n).
double smallest_p(int n, int m);
// The shift of pairs: now_i measured with reference_i (contend ab runs both sides once a round, in
// a shuffled order). The ratio is the geometric mean of the pairs' ratios, its interval Student's
// t at 1 - alpha, p the two-sided one-sample t-test of their logs. A t-test where the unpaired
// test ranks: the round's drift, which skews single repetitions, cancels in its pair's ratio, and
// the shuffled order makes the log ratios symmetric about the change, where t holds; the signed
// ranks of 5 pairs could never give p < 0.0625. Exact (as shift_of) when every pair has one ratio.
// Requires as many values on each side (else no shift: confidence 0), 2 or more positive pairs.
Shift paired_shift_of(const std::vector<double>& reference, const std::vector<double>& now, double alpha = 0.05);

enum class Change { kFaster, kSlower, kSame, kUnresolved, kMissing };
const char* change_name(Change c);  // "faster", "slower", "no change", "unresolved", "missing"

// What is compared: the throughput (one machine's runs against each other: a history, a
// reference of the same machine) or the speedup over the experiment's baseline schedule,
// repetition by repetition (machines differ, their ratios less).
enum class Quantity { kThroughput, kSpeedup };
const char* quantity_name(Quantity q);  // "throughput", "speedup"
// The cell's values of `q`, one per repetition: its throughput samples, or each over the
// baseline's sample of the same repetition (over the baseline's median where the counts differ).
std::vector<double> values_of(const Summary& s, const CellSummary& cell, Quantity q);

struct Verdict {
  std::string scenario;
  std::string schedule;
  std::vector<double> reference;
  std::vector<double> now;
  Shift shift;
  Change change = Change::kSame;
  // Three or more reference runs compared by speedup: how far below their pool's middle an
  // unchanged tree's next run may lie, by their own drift (the 95% prediction interval), as a
  // share of that middle; else 0.
  double drift = 0;
  bool fails = false;  // significantly slower by more than the tolerance (or the drift); or missing
  std::string why;     // one line: the reason for the verdict, with the numbers
};
struct VerdictOptions {
  double tolerance = 0.02;
  double alpha = 0.05;
  Quantity quantity = Quantity::kThroughput;
  // The i-th values of both sides form a pair (contend ab's rounds): paired_shift_of, not shift_of.
  bool paired = false;
  // The cells are one family: each p is Holm-adjusted over the cells tested (the smallest times
  // their number, the next times one less, kept increasing; exact and untestable cells left out),
  // so that the chance that a run of an unchanged tree flags any cell stays near alpha (t's level
  // is approximate); else alpha holds for each cell alone. Intervals stay each cell's own.
  bool family = false;
};
// The test as tables and reports name it: "Mann-Whitney U", or "paired t (Holm over the cells)".
std::string test_name(const VerdictOptions& o);
// Several reference runs as one: each cell's repetitions of every run that has it, run after run
// (each repetition's baseline beside it, so speedups still pair), in the first run's cell order. A
// reference of a few recent runs carries their run-to-run spread, which one run's repetitions do
// not: one lucky or unlucky reference run biases every comparison with it. Requires one or more.
Summary pooled(const std::vector<Summary>& runs);
// One verdict per cell of `reference`, in its order (kMissing for a cell absent now). Both
// summaries must be comparable (check_comparable).
std::vector<Verdict> verdicts(const Summary& now, const Summary& reference, const VerdictOptions& o);
// Against several reference runs: verdicts against their pool and, by speedup, each cell's
// tolerance widened to what the runs' own drift allows where that is larger. Speedup references
// come from other machines (instances of one kind), and a cell's speedup drifts between runs: the
// periodic adaptive cell of the shipped baselines lies 1.16-1.25 x 1F1B, and unchanged trees ran
// it at 1.08-1.14. The test takes one run's repetitions as independent draws though they share its
// drift, so a run drawn low fails the pool's middle. The drift allowed reaches from the pool's
// middle down to the lower end of the 95% prediction interval for a further run's median from the
// k runs' medians (mean - t s sqrt(1 + 1/k)): the interval for a new observation, where the runs'
// range understates how far a fourth lies. Three runs at least (docs/regression.md).
// By throughput the references are one machine's last runs, whose pool alone raised no false
// alarm in the benchmark, and the drift would hide losses of its size: the tolerance stays.
// None: no verdicts; one: `verdicts` above.
std::vector<Verdict> verdicts(const Summary& now, const std::vector<Summary>& references, const VerdictOptions& o);
// The console table: cell, reference and now (medians), ratio [interval], p, n, verdict.
std::string verdict_table(const std::vector<Verdict>& v, const std::string& unit, const VerdictOptions& o);

}  // namespace contend::runner
