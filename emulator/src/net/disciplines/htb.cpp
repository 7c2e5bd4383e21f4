// HTB link mode: root 1:, link class 1:1, workload class 1:10 (the default) and background class
// 1:20, which a u32 filter fills with packets from the end's background address (none on a
// fabric's ports); under both leaf classes a bfifo holding queue_bytes_for the link's rate, or
// netem when the link has delay or loss. The classes come from htb_classes (htb_params.h),
// so the preemption policy is what the runner's model (workload_rate_bps) assumes.

#include <optional>

#include "net/disciplines/discipline.h"

namespace contend::emulator {
namespace {

constexpr std::uint32_t kLinkMinor = 1;
constexpr std::uint32_t kWorkloadMinor = 0x10;  // tc prints minors in hex: 1:10
constexpr std::uint32_t kBackgroundMinor = 0x20;

class HtbDiscipline final : public Discipline {
 public:
  HtbDiscipline(const LinkSpec& link, std::string background_src)
      : preemption_(link.preemption), workload_share_(link.workload_share), background_src_(std::move(background_src)) {
    if (link.delay.count() > 0 || link.loss_fraction > 0) {
      netem_ = detail::NetemParams{link.delay, link.loss_fraction};
    }
  }

  Result<void> install(const detail::TcTarget& tc, double rate_bps) override {
    if (auto ok = detail::add_htb_root(tc, kWorkloadMinor); !ok) {
      return ok;
    }
    auto ok = build(tc, rate_bps);
    if (!ok) {
      (void)detail::delete_root(tc);
    }
    return ok;
  }

  Result<void> set_rate(const detail::TcTarget& tc, double rate_bps) override {
    // HTB accepts children above their parent for the instant between the calls; each call is in
    // force when it returns, so the three land within tens of microseconds.
    if (auto ok = put_classes(tc, rate_bps, false); !ok || netem_) {
      return ok;
    }
    return put_queues(tc, rate_bps, false);
  }

  Result<std::vector<ClassStats>> stats(const detail::TcTarget& tc) const override {
    auto out = detail::htb_class_stats(
        tc, {{kLinkMinor, "link"}, {kWorkloadMinor, "workload"}, {kBackgroundMinor, "background"}});
    if (out) {
      for (ClassStats& s : *out) {
        s.link_level = s.minor == kLinkMinor;
      }
    }
    return out;
  }

 private:
  // The classes, the background filter and netem, one at a time: after a failure nothing more
  // is sent.
  Result<void> build(const detail::TcTarget& tc, double rate_bps) {
    if (auto ok = put_classes(tc, rate_bps, true); !ok) {
      return ok;
    }
    // A fabric's port has no background address: all its traffic shares the workload class, as
    // all of a switch port's traffic shares its queue.
    if (auto ok =
            background_src_.empty() ? Result<void>{} : detail::add_u32(tc, kBackgroundMinor, background_src_, true);
        !ok) {
      return ok;
    }
    if (!netem_) {
      return put_queues(tc, rate_bps, true);
    }
    for (std::uint32_t minor : {kWorkloadMinor, kBackgroundMinor}) {
      if (auto ok = detail::add_netem(tc, minor, *netem_); !ok) {
        return ok;
      }
    }
    return {};
  }

  // Each leaf class's queue, as long (in time) at every rate the link is set to.
  static Result<void> put_queues(const detail::TcTarget& tc, double rate_bps, bool create) {
    for (std::uint32_t minor : {kWorkloadMinor, kBackgroundMinor}) {
      if (auto ok = detail::put_bfifo(tc, minor, queue_bytes_for(rate_bps), create); !ok) {
        return ok;
      }
    }
    return {};
  }

  Result<void> put_classes(const detail::TcTarget& tc, double rate_bps, bool create) {
    const HtbLinkClasses c = htb_classes(rate_bps, preemption_, workload_share_);
    for (auto [minor, parent, cls] :
         {std::tuple{kLinkMinor, 0u, c.link}, std::tuple{kWorkloadMinor, kLinkMinor, c.workload},
          std::tuple{kBackgroundMinor, kLinkMinor, c.background}}) {
      if (auto ok = detail::put_htb_class(tc, minor, parent, cls, create); !ok) {
        return ok;
      }
    }
    return {};
  }

  Preemption preemption_;
  double workload_share_;
  std::string background_src_;
  std::optional<detail::NetemParams> netem_;
};

std::unique_ptr<Discipline> make_htb(const LinkSpec& link, const std::string& background_src) {
  return std::make_unique<HtbDiscipline>(link, background_src);
}

}  // namespace

DisciplineItem htb_discipline() {
  return {{"", "htb", "a workload and a background class under the link's rate", {}},
          DisciplineKind{.min_rate_bps = kMinClassBps,
                         .max_rate_bps = kHtbMaxBps,
                         .preemption_classes = true,
                         .netem = true,
                         .make = make_htb}};
}

}  // namespace contend::emulator
