#pragma once
// Change points in a series of runs by E-divisive means (Matteson and James 2014, as MongoDB's
// performance CI and Hunter use it): the split that maximises the energy distance between the
// runs before and after it, kept when a permutation test finds it significant, then each side
// searched again. Distribution-free: one slow run moves it less than it moves a mean. Seeded
// permutations, so the same series always gives the same points. Pure.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace contend::runner {

struct ChangePoint {
  std::size_t index = 0;  // the first run of the new level
  double before = 0;      // median of the runs since the previous change point
  double after = 0;       // median of the runs up to the next one
  double p = 1;           // the permutation test's p-value of the split
};
struct ChangePointOptions {
  double alpha = 0.01;  // a split is kept when its p-value is at most this
  int permutations = 199;
  int min_size = 3;  // runs on each side of a split, at least
  std::uint64_t seed = 1;
  // A significant split whose size (after over before, less 1) is smaller than this is dropped,
  // the levels beside it measured again without it: a change too small to matter.
  double min_change = 0;
};
// In index order. A series shorter than 2 * min_size has none.
std::vector<ChangePoint> change_points(const std::vector<double>& series, const ChangePointOptions& o = {});

}  // namespace contend::runner
