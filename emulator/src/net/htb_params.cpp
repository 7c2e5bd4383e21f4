#include "contend/emulator/net/htb_params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "contend/common/units.h"
#include "contend/emulator/net/discipline_registry.h"

namespace contend::emulator {

std::uint32_t burst_bytes_for(double rate_bps) {
  const double bytes = std::max(kBurstSeconds * rate_bps / 8.0, static_cast<double>(kMinBurstBytes));
  return static_cast<std::uint32_t>(std::min(bytes, 2147483647.0));
}

std::uint32_t queue_bytes_for(double rate_bps) {
  return static_cast<std::uint32_t>(
      std::min(static_cast<double>(burst_bytes_for(rate_bps)) + kQueueSeconds * rate_bps / 8.0, 2147483647.0));
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

namespace {
// What a class that wants `want` more gets of `spare` beside one that wants `other` more.
double borrowed(double spare, double want, int prio, double other, int other_prio) {
  if (prio < other_prio) {
    return std::min(want, spare);
  }
  if (other_prio < prio) {
    return std::min(want, spare - std::min(other, spare));
  }
  // Equal prios: HTB's round robin with equal quanta gives each half, and the other's unused part.
  const double half = spare / 2;
  return std::min(want, std::max(half, spare - std::min(other, half)));
}
}  // namespace

double workload_rate_bps(const LinkSpec& link, double rate_bps, double background_bps, bool background_running) {
  const DisciplineItem* d = find_discipline(link.qdisc);
  const Preemption policy = d == nullptr || d->kind.preemption_classes ? link.preemption : Preemption::kFair;
  const HtbLinkClasses c = htb_classes(rate_bps, policy, link.workload_share);
  const double background_wants = !background_running  ? 0
                                  : background_bps > 0 ? background_bps
                                                       : std::numeric_limits<double>::infinity();
  const double background = std::min(background_wants, c.background.rate_bps);
  const double workload = c.workload.rate_bps;  // the workload takes all it can
  const double spare = std::max(0.0, c.link.rate_bps - background - workload);
  const double background_more = std::min(background_wants, c.background.ceil_bps) - background;
  return workload +
         borrowed(spare, c.workload.ceil_bps - workload, c.workload.prio, background_more, c.background.prio);
}

namespace {
// The smallest share of the link one of `link`'s classes is guaranteed (htb_classes).
double smallest_share(const LinkSpec& link) {
  const DisciplineKind& d = find_discipline(link.qdisc)->kind;
  if (d.flow_queues > 0) {
    return 1.0 / d.flow_queues;
  }
  if (!d.preemption_classes) {
    return 1.0;
  }
  // background-first keeps min(max(0.1%, 8 kbit), half) for the workload: at the lowest rate, half.
  return link.preemption == Preemption::kSplit ? std::min(link.workload_share, 1 - link.workload_share) : 0.5;
}
}  // namespace

double lowest_rate_bps(const LinkSpec& link) {
  return find_discipline(link.qdisc)->kind.min_rate_bps / smallest_share(link);
}

double highest_rate_bps(const LinkSpec& link) {
  return find_discipline(link.qdisc)->kind.max_rate_bps;
}

std::string rate_problem(const LinkSpec& link, double rate_bps) {
  const double lo = lowest_rate_bps(link);
  const double hi = highest_rate_bps(link);
  if (rate_bps >= lo && rate_bps <= hi) {
    return "";
  }
  const DisciplineKind& d = find_discipline(link.qdisc)->kind;
  const char* policy = preemption_name(link.preemption);
  char share[32];
  std::snprintf(share, sizeof share, "%.3g", smallest_share(link));
  const std::string why = d.preemption_classes ? "each class at least " + format_rate(d.min_rate_bps) + "; under " +
                                                     policy + " the smallest class gets " + share + " of the link"
                          : d.flow_queues > 0 ? "each of its " + std::to_string(d.flow_queues) +
                                                    " flow queues at least " + format_rate(d.min_rate_bps)
                                              : "its bucket at least " + format_rate(d.min_rate_bps);
  return link.qdisc + " installs " + format_rate(lo) + " to " + format_rate(hi) + " on this link (" + why + "), got " +
         format_rate(rate_bps);
}

TbfParams tbf_params(double rate_bps) {
  TbfParams p;
  p.rate_bps = rate_bps;
  p.burst_bytes = burst_bytes_for(rate_bps);
  p.limit_bytes = queue_bytes_for(rate_bps);
  return p;
}

}  // namespace contend::emulator
