#include "sample_pacer.h"

#include <algorithm>
#include <cmath>

namespace contend::emulator {

double SamplePacer::after(double cost_s) {
  recent_[rounds_++ % recent_.size()] = cost_s;
  const auto seen = recent_.begin() + static_cast<std::ptrdiff_t>(std::min(rounds_, recent_.size()));
  cost_s_ = *std::min_element(recent_.begin(), seen);
  const double multiples = std::ceil(cost_s_ / kCpuShare / base_s_ - 1e-9);  // exactly a tenth: no rounding up
  period_s_ = std::round(base_s_ * std::max(1.0, multiples) * 1e6) / 1e6;    // whole microseconds, as logged
  return period_s_;
}

}  // namespace contend::emulator
