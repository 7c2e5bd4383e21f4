#include "dependencies.h"

namespace contend::schedule::detail {

Dependencies::Dependencies(const Schedule& schedule)
    : schedule_(schedule), lowered_(schedule.lowered()), m_(schedule.num_microbatches) {
  for (auto& d : done_) {
    d.assign(static_cast<std::size_t>(schedule.num_stages) * static_cast<std::size_t>(m_), 0);
  }
}

Action Dependencies::blocker(const Action& a) const {
  const int s = a.stage;
  const int mb = a.microbatch;
  const int last = schedule_.num_stages - 1;
  const auto cross = [&](int other) { return schedule_.rank_of(other) != schedule_.rank_of(s); };
  switch (a.op) {
    case Op::kForward:
      if (s > 0) {
        if (lowered_ && cross(s - 1)) {
          return done(Op::kRecvF, s, mb) ? a : Action{s, Op::kRecvF, mb};
        }
        return done(Op::kForward, s - 1, mb) ? a : Action{s - 1, Op::kForward, mb};
      }
      return a;
    case Op::kBackward:
    case Op::kBackwardInput:
      if (!done(Op::kForward, s, mb)) {
        return Action{s, Op::kForward, mb};
      }
      if (s < last) {
        if (lowered_ && cross(s + 1)) {
          return done(Op::kRecvB, s, mb) ? a : Action{s, Op::kRecvB, mb};
        }
        return gradient_done(s + 1, mb) ? a : Action{s + 1, a.op, mb};
      }
      return a;
    case Op::kBackwardWeight:
      return done(Op::kBackwardInput, s, mb) ? a : Action{s, Op::kBackwardInput, mb};
    case Op::kSendF:
      return done(Op::kForward, s, mb) ? a : Action{s, Op::kForward, mb};
    case Op::kSendB:
      return gradient_done(s, mb) ? a : Action{s, Op::kBackward, mb};
    case Op::kRecvF:
      return done(Op::kSendF, s - 1, mb) ? a : Action{s - 1, Op::kSendF, mb};
    case Op::kRecvB:
      return done(Op::kSendB, s + 1, mb) ? a : Action{s + 1, Op::kSendB, mb};
  }
  return a;
}

bool Dependencies::ready(const Action& a) const {
  return blocker(a) == a;
}

void Dependencies::complete(const Action& a) {
  done_[static_cast<int>(a.op)][index(a.stage, a.microbatch)] = 1;
}

std::string Dependencies::waiting_for(const Action& a) const {
  const Action b = blocker(a);
  return to_string(b) + " on rank " + std::to_string(schedule_.rank_of(b.stage));
}

}  // namespace contend::schedule::detail
