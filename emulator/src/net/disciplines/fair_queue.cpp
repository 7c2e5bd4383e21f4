// Fair queueing, as SFQ and fq do it, from what every kernel here has: HTB root 1:, link class 1:1
// at the link's rate, and under it kFlowQueues classes 1:100.. each guaranteed 1/kFlowQueues of the rate
// and borrowing up to all of it, at one prio with equal quanta, so HTB's round robin gives every
// busy class the same share and an idle one's share to the others (max-min). The eBPF classifier
// (net/flow_classifier.h) gives each flow a class of its own while there are no more flows than
// classes. Each class holds a bfifo of queue_bytes_for the link's rate. No preemption classes: the
// workload's and background flows are flows like any other; no netem.

#include "contend/common/fnv.h"
#include "net/disciplines/discipline.h"
#include "net/flow_classifier.h"

namespace contend::emulator {
namespace {

constexpr std::uint32_t kFairLinkMinor = 1;
constexpr std::uint32_t kFirstFlowQueueMinor = 0x100;  // 1:100, tc's hex
constexpr int kFlowQueues = 16;

std::uint32_t flow_queue_minor(int i) {
  return kFirstFlowQueueMinor + static_cast<std::uint32_t>(i);
}

class FairQueueDiscipline final : public Discipline {
 public:
  Result<void> install(const detail::TcTarget& tc, double rate_bps) override {
    auto program = detail::load_flow_classifier(kFirstFlowQueueMinor, kFlowQueues);
    if (!program) {
      return program.error();
    }
    if (auto ok = detail::add_htb_root(tc, kFirstFlowQueueMinor); !ok) {
      return ok;
    }
    auto ok = put(tc, rate_bps, true);
    if (ok) {
      ok = detail::add_bpf_classifier(tc, program->get(), "contend_fair_queue");
    }
    if (!ok) {
      (void)detail::delete_root(tc);
    }
    return ok;
  }

  Result<void> set_rate(const detail::TcTarget& tc, double rate_bps) override { return put(tc, rate_bps, false); }

  // One entry, the link's: its bytes, the queues' drops (HTB counts a drop at the leaf class) and
  // what they hold, and a setup that covers every queue's rate, ceil and bursts, so a queue
  // changed beside contend is seen as the link's shaping changed.
  Result<std::vector<ClassStats>> stats(const detail::TcTarget& tc) const override {
    std::vector<std::pair<std::uint32_t, std::string>> wanted = {{kFairLinkMinor, "link"}};
    for (int i = 0; i < kFlowQueues; ++i) {
      wanted.emplace_back(flow_queue_minor(i), "queue " + std::to_string(i));
    }
    auto all = detail::htb_class_stats(tc, wanted);
    if (!all) {
      return all.error();
    }
    std::vector<ClassStats> out;
    std::uint64_t setup = kFnv1aStart;
    for (ClassStats& s : *all) {
      setup = fnv1a(std::to_string(s.minor) + " " + std::to_string(s.rate_bps) + " " + std::to_string(s.setup), setup);
      if (s.minor == kFairLinkMinor) {
        s.link_level = true;
        out.push_back(std::move(s));
      } else if (!out.empty()) {
        out.front().drops += s.drops;
        out.front().backlog_bytes += s.backlog_bytes;
      }
    }
    if (!out.empty()) {
      out.front().setup = setup;
    }
    return out;
  }

 private:
  // The link's class, each queue's class and each queue's bfifo, added (`create`) or changed in
  // place, one at a time: after a failure nothing more is sent.
  static Result<void> put(const detail::TcTarget& tc, double rate_bps, bool create) {
    if (auto ok = detail::put_htb_class(tc, kFairLinkMinor, 0, htb_class(rate_bps, rate_bps, 0), create); !ok) {
      return ok;
    }
    const HtbClass queue = htb_class(rate_bps / kFlowQueues, rate_bps, 0);
    for (int i = 0; i < kFlowQueues; ++i) {
      if (auto ok = detail::put_htb_class(tc, flow_queue_minor(i), kFairLinkMinor, queue, create); !ok) {
        return ok;
      }
    }
    for (int i = 0; i < kFlowQueues; ++i) {
      if (auto ok = detail::put_bfifo(tc, flow_queue_minor(i), queue_bytes_for(rate_bps), create); !ok) {
        return ok;
      }
    }
    return {};
  }
};

std::unique_ptr<Discipline> make_fair_queue(const LinkSpec& /*link*/, const std::string& /*background_src*/) {
  return std::make_unique<FairQueueDiscipline>();
}

}  // namespace

DisciplineItem fair_queue_discipline() {
  return {{"", "fair-queue", "flows share the link max-min fairly: a queue each, served in turn", {}},
          DisciplineKind{.min_rate_bps = kMinClassBps,
                         .max_rate_bps = kHtbMaxBps,
                         .preemption_classes = false,
                         .netem = false,
                         .flow_queues = kFlowQueues,
                         .probe = detail::probe_flow_classifier,
                         .make = make_fair_queue}};
}

}  // namespace contend::emulator
