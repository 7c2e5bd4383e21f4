#include "contend/emulator/htb_params.h"

#include <algorithm>
#include <cmath>

namespace contend::emulator {

std::uint32_t burst_bytes_for(double rate_bps) {
  const double bytes = std::max(kBurstSeconds * rate_bps / 8.0, static_cast<double>(kMinBurstBytes));
  return static_cast<std::uint32_t>(std::min(bytes, 2147483647.0));
}

HtbClass htb_class(double rate_bps, double ceil_bps, int prio) {
  HtbClass c;
  c.rate_bps = rate_bps;
  c.ceil_bps = ceil_bps;
  c.burst_bytes = burst_bytes_for(rate_bps);
  c.cburst_bytes = burst_bytes_for(ceil_bps);
  c.prio = prio;
  return c;
}

HtbLinkClasses htb_classes(double rate_bps, Preemption preemption, double workload_share) {
  CONTEND_CHECK(rate_bps > 0, "htb_classes needs a positive rate");
  HtbLinkClasses out;
  out.link = htb_class(rate_bps, rate_bps, 0);
  switch (preemption) {
    case Preemption::kBackgroundFirst: {
      const double kept = std::min(std::max(rate_bps * 0.001, 8000.0), rate_bps / 2);
      out.background = htb_class(rate_bps - kept, rate_bps, 0);
      out.workload = htb_class(kept, rate_bps, 1);
      break;
    }
    case Preemption::kFair:
      out.workload = htb_class(rate_bps / 2, rate_bps, 0);
      out.background = htb_class(rate_bps / 2, rate_bps, 0);
      break;
    case Preemption::kSplit:
      CONTEND_CHECK(workload_share > 0 && workload_share < 1, "split share must be in (0, 1)");
      out.workload = htb_class(rate_bps * workload_share, rate_bps * workload_share, 0);
      out.background = htb_class(rate_bps * (1 - workload_share), rate_bps * (1 - workload_share), 0);
      break;
  }
  return out;
}

TbfParams tbf_params(double rate_bps) {
  TbfParams p;
  p.rate_bps = rate_bps;
  p.burst_bytes = burst_bytes_for(rate_bps);
  p.limit_bytes =
      static_cast<std::uint32_t>(std::min(static_cast<double>(p.burst_bytes) + 0.050 * rate_bps / 8.0, 2147483647.0));
  return p;
}

}  // namespace contend::emulator
