#include "contend/runner/regression/verdict.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/students_t.hpp>

namespace contend::runner {

Shift paired_shift_of(const std::vector<double>& reference, const std::vector<double>& now, double alpha) {
  Shift s;
  if (reference.size() != now.size()) {
    return s;  // no pairs (verdict.cpp says so)
  }
  std::vector<double> logs;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (reference[i] > 0 && now[i] > 0) {
      logs.push_back(std::log(now[i] / reference[i]));
    }
  }
  if (logs.size() < 2) {
    return s;
  }
  const double n = static_cast<double>(logs.size());
  double mean = 0;
  for (double d : logs) {
    mean += d / n;
  }
  double squares = 0;
  for (double d : logs) {
    squares += (d - mean) * (d - mean);
  }
  s.ratio = std::exp(mean);
  const double se = std::sqrt(squares / (n - 1) / n);
  if (!(se > 1e-12 * std::max(1.0, std::abs(mean)))) {  // every pair one ratio (a simulated run)
    s.exact = true;
    s.low = s.high = s.ratio;
    s.confidence = 1;
    s.p = std::abs(mean) < 1e-12 ? 1 : 0;
    return s;
  }
  const boost::math::students_t t(n - 1);
  const double reach = boost::math::quantile(boost::math::complement(t, alpha / 2)) * se;
  s.low = std::exp(mean - reach);
  s.high = std::exp(mean + reach);
  s.confidence = 1 - alpha;
  s.p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(t, std::abs(mean) / se)));
  return s;
}

}  // namespace contend::runner
