#include "contend/runner/regression/change_points.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "contend/runner/results/summary.h"

namespace contend::runner {
namespace {

// Sums of |x_i - x_j| over rectangles of index pairs, from 2-D prefix sums.
class PairDistances {
 public:
  explicit PairDistances(const std::vector<double>& x) : n_(x.size()), sums_((n_ + 1) * (n_ + 1), 0.0) {
    for (std::size_t i = 0; i < n_; ++i) {
      for (std::size_t j = 0; j < n_; ++j) {
        at(i + 1, j + 1) = std::abs(x[i] - x[j]) + at(i, j + 1) + at(i + 1, j) - at(i, j);
      }
    }
  }
  // Sum over i in [i0, i1), j in [j0, j1).
  double sum(std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) const {
    return get(i1, j1) - get(i0, j1) - get(i1, j0) + get(i0, j0);
  }

 private:
  double& at(std::size_t i, std::size_t j) { return sums_[i * (n_ + 1) + j]; }
  double get(std::size_t i, std::size_t j) const { return sums_[i * (n_ + 1) + j]; }
  std::size_t n_;
  std::vector<double> sums_;
};

struct Split {
  std::size_t at = 0;  // index within the values given
  double q = -1;       // the scaled energy distance; -1: no split possible
};

// The split of `x` with the largest scaled energy distance between its two sides.
Split best_split(const std::vector<double>& x, std::size_t min_size) {
  const PairDistances d(x);
  const std::size_t n = x.size();
  Split best;
  for (std::size_t t = min_size; t + min_size <= n; ++t) {
    const double nx = static_cast<double>(t);
    const double ny = static_cast<double>(n - t);
    const double cross = d.sum(0, t, t, n) / (nx * ny);
    const double within_x = d.sum(0, t, 0, t) / (nx * (nx - 1));  // each pair counted twice
    const double within_y = d.sum(t, n, t, n) / (ny * (ny - 1));
    const double q = nx * ny / (nx + ny) * (2 * cross - within_x - within_y);
    if (q > best.q) {
      best = {t, q};
    }
  }
  return best;
}

// Splits [begin, end) of `series` while a split is significant, adding each to `found`.
void divide(const std::vector<double>& series, std::size_t begin, std::size_t end, const ChangePointOptions& o,
            std::mt19937_64& rng, std::vector<ChangePoint>& found) {
  const std::size_t min_size = static_cast<std::size_t>(std::max(2, o.min_size));
  if (end - begin < 2 * min_size) {
    return;
  }
  std::vector<double> x(series.begin() + static_cast<std::ptrdiff_t>(begin),
                        series.begin() + static_cast<std::ptrdiff_t>(end));
  const Split split = best_split(x, min_size);
  if (split.q <= 0) {
    return;
  }
  int as_large = 0;
  for (int i = 0; i < o.permutations; ++i) {
    std::shuffle(x.begin(), x.end(), rng);
    as_large += best_split(x, min_size).q >= split.q ? 1 : 0;
  }
  const double p = (as_large + 1.0) / (o.permutations + 1.0);
  if (p > o.alpha) {
    return;
  }
  ChangePoint cp;
  cp.index = begin + split.at;
  cp.p = p;
  found.push_back(cp);
  divide(series, begin, cp.index, o, rng, found);
  divide(series, cp.index, end, o, rng, found);
}

// Each point's before and after: the medians of the runs between it and its neighbours.
void measure_levels(const std::vector<double>& series, std::vector<ChangePoint>& found) {
  for (std::size_t i = 0; i < found.size(); ++i) {
    const std::size_t from = i == 0 ? 0 : found[i - 1].index;
    const std::size_t to = i + 1 < found.size() ? found[i + 1].index : series.size();
    const auto at = [&series](std::size_t k) { return series.begin() + static_cast<std::ptrdiff_t>(k); };
    found[i].before = stats_of(std::vector<double>(at(from), at(found[i].index))).median;
    found[i].after = stats_of(std::vector<double>(at(found[i].index), at(to))).median;
  }
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& series, const ChangePointOptions& o) {
  std::vector<ChangePoint> found;
  std::mt19937_64 rng(o.seed);
  divide(series, 0, series.size(), o, rng, found);
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  measure_levels(series, found);
  const auto too_small = [&o](const ChangePoint& c) { return !(std::abs(c.after / c.before - 1) >= o.min_change); };
  while (std::any_of(found.begin(), found.end(), too_small)) {
    // The smallest first: dropping it merges two levels, which may make a neighbour larger.
    auto smallest = std::min_element(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) {
      return std::abs(a.after / a.before - 1) < std::abs(b.after / b.before - 1);
    });
    found.erase(smallest);
    measure_levels(series, found);
  }
  return found;
}

}  // namespace contend::runner
