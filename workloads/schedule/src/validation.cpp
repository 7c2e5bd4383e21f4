#include "contend/schedule/validation.h"

#include <algorithm>

#include "dependencies.h"

namespace contend::schedule {
namespace {

class Checker {
 public:
  explicit Checker(const Schedule& s) : s_(s), last_(s.num_stages - 1) {}

  Result<void> structure() {
    if (s_.num_ranks < 1 || static_cast<int>(s_.ranks.size()) != s_.num_ranks) {
      return fail("has " + std::to_string(s_.ranks.size()) + " action lists for " + std::to_string(s_.num_ranks) +
                  " ranks");
    }
    if (s_.num_stages < s_.num_ranks || s_.num_stages % s_.num_ranks != 0) {
      return fail(std::to_string(s_.num_stages) + " stages is not a positive multiple of " +
                  std::to_string(s_.num_ranks) + " ranks");
    }
    if (s_.num_microbatches < 1) {
      return fail("needs at least one micro-batch");
    }
    const std::size_t cells = static_cast<std::size_t>(s_.num_stages) * static_cast<std::size_t>(s_.num_microbatches);
    for (auto& c : count_) {
      c.assign(cells, 0);
    }
    lowered_ = s_.lowered();
    for (int r = 0; r < s_.num_ranks; ++r) {
      const auto& actions = s_.ranks[r];
      for (std::size_t i = 0; i < actions.size(); ++i) {
        if (auto ok = check_action(r, i, actions[i]); !ok) {
          return ok;
        }
      }
    }
    return missing();
  }

  Result<void> execute() {
    detail::Dependencies deps(s_);
    const int p = s_.num_ranks;
    std::vector<std::size_t> pc(p, 0);
    // Worklist: a rank that made progress can only unblock its neighbours, since stage s talks to
    // stages s-1 and s+1, which live on ranks r-1 and r+1 (mod p).
    std::vector<int> work;
    std::vector<char> queued(p, 1);
    for (int r = p - 1; r >= 0; --r) {
      work.push_back(r);
    }
    while (!work.empty()) {
      const int r = work.back();
      work.pop_back();
      queued[r] = 0;
      const auto& actions = s_.ranks[r];
      bool progress = false;
      while (pc[r] < actions.size() && deps.ready(actions[pc[r]])) {
        deps.complete(actions[pc[r]++]);
        progress = true;
      }
      if (progress) {
        for (int n : {(r + 1) % p, (r + p - 1) % p}) {
          if (!queued[n]) {
            queued[n] = 1;
            work.push_back(n);
          }
        }
      }
    }
    std::string blocked;
    for (int r = 0; r < s_.num_ranks; ++r) {
      if (pc[r] < s_.ranks[r].size()) {
        const Action& a = s_.ranks[r][pc[r]];
        blocked += std::string(blocked.empty() ? "" : "; ") + "rank " + std::to_string(r) + ", action " +
                   std::to_string(pc[r]) + " (" + to_string(a) + ") waits for " + deps.waiting_for(a);
      }
    }
    if (!blocked.empty()) {
      return make_error(Errc::kDeadlock, s_.name + ": deadlock: " + blocked);
    }
    return {};
  }

 private:
  Error fail(const std::string& why) const { return make_error(Errc::kInvalidArgument, s_.name + ": " + why); }
  Error fail_at(int r, std::size_t i, const Action& a, const std::string& why) const {
    return fail("rank " + std::to_string(r) + ", action " + std::to_string(i) + " (" + to_string(a) + "): " + why);
  }
  int& count(Op op, int stage, int mb) {
    return count_[static_cast<int>(op)][static_cast<std::size_t>(stage) * s_.num_microbatches + mb];
  }
  bool cross(int stage, int other) const { return s_.rank_of(stage) != s_.rank_of(other); }
  // Whether a comm action of `op` exists at `stage` in a lowered schedule.
  bool comm_needed(Op op, int stage) const {
    switch (op) {
      case Op::kSendF:
        return stage < last_ && cross(stage, stage + 1);
      case Op::kRecvB:
        return stage < last_ && cross(stage, stage + 1);
      case Op::kRecvF:
        return stage > 0 && cross(stage, stage - 1);
      case Op::kSendB:
        return stage > 0 && cross(stage, stage - 1);
      default:
        return false;
    }
  }

  Result<void> check_action(int r, std::size_t i, const Action& a) {
    if (a.stage < 0 || a.stage > last_) {
      return fail_at(r, i, a, "stage out of range 0.." + std::to_string(last_));
    }
    if (a.microbatch < 0 || a.microbatch >= s_.num_microbatches) {
      return fail_at(r, i, a, "micro-batch out of range 0.." + std::to_string(s_.num_microbatches - 1));
    }
    if (s_.rank_of(a.stage) != r) {
      return fail_at(r, i, a,
                     "stage " + std::to_string(a.stage) + " runs on rank " + std::to_string(s_.rank_of(a.stage)));
    }
    if (!is_compute(a.op) && !comm_needed(a.op, a.stage)) {
      return fail_at(r, i, a, "stage " + std::to_string(a.stage) + " has no peer on another rank in that direction");
    }
    if (++count(a.op, a.stage, a.microbatch) > 1) {
      return fail_at(r, i, a, "appears more than once");
    }
    if (a.op == Op::kBackward && count(Op::kForward, a.stage, a.microbatch) == 0) {
      return fail_at(r, i, a,
                     "backward of micro-batch " + std::to_string(a.microbatch) + " before its forward on stage " +
                         std::to_string(a.stage));
    }
    return {};
  }

  Result<void> missing() {
    static constexpr Op kOps[] = {Op::kForward, Op::kBackward, Op::kSendF, Op::kRecvF, Op::kSendB, Op::kRecvB};
    for (int s = 0; s <= last_; ++s) {
      for (int mb = 0; mb < s_.num_microbatches; ++mb) {
        for (Op op : kOps) {
          const bool needed = is_compute(op) || (lowered_ && comm_needed(op, s));
          if (needed && count(op, s, mb) == 0) {
            return fail("rank " + std::to_string(s_.rank_of(s)) + " lacks " + to_string({s, op, mb}));
          }
        }
      }
    }
    return {};
  }

  const Schedule& s_;
  const int last_;
  bool lowered_ = false;
  std::vector<int> count_[6];
};

}  // namespace

std::vector<int> peak_inflight(const Schedule& schedule) {
  std::vector<int> peaks(schedule.num_ranks, 0);
  for (int r = 0; r < schedule.num_ranks; ++r) {
    int held = 0;
    for (const Action& a : schedule.ranks[r]) {
      if (a.op == Op::kForward) {
        peaks[r] = std::max(peaks[r], ++held);
      } else if (a.op == Op::kBackward) {
        --held;
      }
    }
  }
  return peaks;
}

Result<ValidationReport> validate(const Schedule& schedule) {
  Checker checker(schedule);
  if (auto ok = checker.structure(); !ok) {
    return ok.error();
  }
  if (auto ok = checker.execute(); !ok) {
    return ok.error();
  }
  return ValidationReport{peak_inflight(schedule)};
}

}  // namespace contend::schedule
