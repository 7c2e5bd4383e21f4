#pragma once
// Private: the data dependencies between the actions of a schedule, shared by validation and the
// step-aligned CSV export. Tracks which actions have completed and answers whether an action's
// inputs are there. Not thread-safe.

#include <string>
#include <vector>

#include "contend/schedule/schedule.h"

namespace contend::schedule::detail {

class Dependencies {
 public:
  explicit Dependencies(const Schedule& schedule);

  // True when everything `a` (on its stage's rank) waits for has completed.
  bool ready(const Action& a) const;
  void complete(const Action& a);
  // What `a` waits for, for error messages: "1SEND_B0 on rank 1".
  std::string waiting_for(const Action& a) const;

 private:
  std::size_t index(int stage, int microbatch) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(m_) + static_cast<std::size_t>(microbatch);
  }
  bool done(Op op, int stage, int microbatch) const {
    return done_[static_cast<int>(op)][index(stage, microbatch)] != 0;
  }
  // The action `a` waits for (the first unmet one), or `a` itself when none.
  Action blocker(const Action& a) const;

  const Schedule& schedule_;
  bool lowered_ = false;
  int m_ = 0;
  // Whether stage s's backward of `microbatch` has produced its input gradient (B or I).
  bool gradient_done(int stage, int microbatch) const {
    return done(Op::kBackward, stage, microbatch) || done(Op::kBackwardInput, stage, microbatch);
  }

  std::vector<char> done_[8];  // per Op, per (stage, micro-batch)
};

}  // namespace contend::schedule::detail
