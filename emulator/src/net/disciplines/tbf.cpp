// TBF: one token bucket at the link's rate that all traffic shares (no classes, no netem). Its
// bucket and queue come from tbf_params (htb_params.h).

#include <linux/pkt_sched.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/tbf.h>

#include "contend/common/fnv.h"
#include "net/disciplines/discipline.h"

namespace contend::emulator {
namespace {

class TbfDiscipline final : public Discipline {
 public:
  Result<void> install(const detail::TcTarget& tc, double rate_bps) override { return put(tc, rate_bps, true); }

  Result<void> set_rate(const detail::TcTarget& tc, double rate_bps) override { return put(tc, rate_bps, false); }

  Result<std::vector<ClassStats>> stats(const detail::TcTarget& tc) const override {
    auto setup = detail::interface_setup(tc);
    if (!setup) {
      return setup.error();
    }
    std::optional<detail::QdiscDump> own;
    auto cache = detail::qdiscs_of(tc, own);
    if (!cache) {
      return cache.error();
    }
    std::vector<ClassStats> out;
    if (rtnl_qdisc* q = rtnl_qdisc_get(*cache, tc.ifindex, TC_HANDLE(1, 0)); q != nullptr) {
      ClassStats s;
      s.name = "tbf";
      s.rate_bps = 8.0 * rtnl_qdisc_tbf_get_rate(q);
      s.bytes = rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_BYTES);
      s.packets = rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_PACKETS);
      s.drops = rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_DROPS);
      s.overlimits = rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_OVERLIMITS);
      s.backlog_bytes = rtnl_tc_get_stat(TC_CAST(q), RTNL_TC_BACKLOG);
      s.link_level = true;
      s.setup =
          fnv1a(std::to_string(rtnl_qdisc_tbf_get_rate_bucket(q)) + "/" + std::to_string(rtnl_qdisc_tbf_get_limit(q)),
                *setup);
      out.push_back(std::move(s));
      rtnl_qdisc_put(q);
    }
    return out;
  }

 private:
  // The root bucket: added (`create`, failing when the interface has a root) or replaced in place.
  static Result<void> put(const detail::TcTarget& tc, double rate_bps, bool create) {
    const TbfParams p = tbf_params(rate_bps);
    rtnl_qdisc* q = detail::alloc_root_qdisc(tc, "tbf");
    if (q == nullptr) {
      return nl_error(NLE_OPNOTSUPP, "rtnl_tc_set_kind(tbf)");
    }
    rtnl_qdisc_tbf_set_limit(q, static_cast<int>(p.limit_bytes));
    rtnl_qdisc_tbf_set_rate(q, static_cast<int>(detail::bytes_per_s(rate_bps)), static_cast<int>(p.burst_bytes), 0);
    const int rc = rtnl_qdisc_add(tc.sock, q, create ? NLM_F_CREATE | NLM_F_EXCL : NLM_F_CREATE | NLM_F_REPLACE);
    rtnl_qdisc_put(q);
    if (rc < 0) {
      return nl_error(rc, "rtnl_qdisc_add(" + tc.ifname + " root tbf)");
    }
    return {};
  }
};

constexpr double kLibnlTbfMaxBps = 17e9;  // libnl sets tbf's rate as 32-bit bytes per second

std::unique_ptr<Discipline> make_tbf(const LinkSpec& /*link*/, const std::string& /*background_src*/) {
  return std::make_unique<TbfDiscipline>();
}

}  // namespace

DisciplineItem tbf_discipline() {
  return {{"", "tbf", "one token bucket that all traffic shares", {}},
          DisciplineKind{.min_rate_bps = kMinClassBps,
                         .max_rate_bps = kLibnlTbfMaxBps,
                         .preemption_classes = false,
                         .netem = false,
                         .make = make_tbf}};
}

}  // namespace contend::emulator
