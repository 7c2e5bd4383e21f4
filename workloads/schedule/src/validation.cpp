#include "contend/schedule/validation.h"

#include <algorithm>

#include "dependencies.h"

namespace contend::schedule {
namespace {

constexpr int kOps = 8;  // every Op, indexing the per-op counts

class Checker {
 public:
  Checker(const Schedule& s, const ActionColumns& columns) : s_(s), columns_(columns), last_(s.num_stages - 1) {}

  Result<void> structure() {
    if (s_.num_ranks < 1 || static_cast<int>(s_.ranks.size()) != s_.num_ranks) {
      return fail("has " + std::to_string(s_.ranks.size()) + " action lists for " + std::to_string(s_.num_ranks) +
                  " ranks");
    }
    if (s_.num_stages < s_.num_ranks || s_.num_stages % s_.num_ranks != 0) {
      return fail(std::to_string(s_.num_stages) + " stages is not a positive multiple of " +
                  std::to_string(s_.num_ranks) + " ranks");
    }
    if (!s_.placement.empty()) {
      if (auto ok = check_placement(); !ok) {
        return ok;
      }
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
    // A rank that made progress can only unblock the ranks that run a stage next to one of its
    // stages: its peers under the schedule's placement.
    std::vector<std::vector<int>> peers(p);
    for (int r = 0; r < p; ++r) {
      peers[r] = s_.peers_of(r);
    }
    std::vector<std::size_t> pc(p, 0);
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
      for (int n : peers[r]) {
        if (progress && !queued[n]) {
          queued[n] = 1;
          work.push_back(n);
        }
      }
    }
    return stuck(deps, pc);
  }

 private:
  Error fail(const std::string& why) const { return make_error(Errc::kInvalidArgument, s_.name + ": " + why); }
  // "rank 1, action 4 (1B0)", or "rank 1, column 7 (1B0)" for a schedule read from a CSV.
  std::string where(int r, std::size_t i, const Action& a) const {
    const bool csv = r < static_cast<int>(columns_.size()) && i < columns_[r].size();
    return "rank " + std::to_string(r) +
           (csv ? ", column " + std::to_string(columns_[r][i]) : ", action " + std::to_string(i)) + " (" +
           to_string(a) + ")";
  }
  Error fail_at(int r, std::size_t i, const Action& a, const std::string& why) const {
    return fail(where(r, i, a) + ": " + why);
  }
  int& count(Op op, int stage, int mb) {
    return count_[static_cast<int>(op)][static_cast<std::size_t>(stage) * s_.num_microbatches + mb];
  }
  bool cross(int stage, int other) const { return s_.rank_of(stage) != s_.rank_of(other); }
  // Whether a comm action of `op` exists at `stage` in a lowered schedule.
  bool comm_needed(Op op, int stage) const {
    switch (op) {
      case Op::kSendF:
      case Op::kRecvB:
        return stage < last_ && cross(stage, stage + 1);
      case Op::kRecvF:
      case Op::kSendB:
        return stage > 0 && cross(stage, stage - 1);
      default:
        return false;
    }
  }

  Result<void> check_placement() const {
    if (static_cast<int>(s_.placement.size()) != s_.num_stages) {
      return fail("places " + std::to_string(s_.placement.size()) + " stages, but has " +
                  std::to_string(s_.num_stages));
    }
    for (int st = 0; st < s_.num_stages; ++st) {
      if (s_.placement[st] < 0 || s_.placement[st] >= s_.num_ranks) {
        return fail("stage " + std::to_string(st) + " is placed on rank " + std::to_string(s_.placement[st]) +
                    ", outside 0.." + std::to_string(s_.num_ranks - 1));
      }
    }
    return {};
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
    const std::string why = order_error(a);
    return why.empty() ? Result<void>{} : fail_at(r, i, a, why);
  }

  // What is wrong with a compute action's place among its stage's others, or "".
  std::string order_error(const Action& a) {
    const std::string mb = std::to_string(a.microbatch);
    const std::string on = " on stage " + std::to_string(a.stage);
    const bool full = count(Op::kBackward, a.stage, a.microbatch) > 0;
    const bool split =
        count(Op::kBackwardInput, a.stage, a.microbatch) + count(Op::kBackwardWeight, a.stage, a.microbatch) > 0;
    if ((a.op == Op::kBackward || a.op == Op::kBackwardInput) && count(Op::kForward, a.stage, a.microbatch) == 0) {
      return std::string(a.op == Op::kBackward ? "backward" : "input gradient") + " of micro-batch " + mb +
             " before its forward" + on;
    }
    if (a.op == Op::kBackwardWeight && count(Op::kBackwardInput, a.stage, a.microbatch) == 0) {
      return "weight gradient of micro-batch " + mb + " before its input gradient (I)" + on;
    }
    if ((a.op == Op::kBackward && split) || ((a.op == Op::kBackwardInput || a.op == Op::kBackwardWeight) && full)) {
      return "micro-batch " + mb + on + " has both a full backward (B) and a split one (I and W)";
    }
    return "";
  }

  Result<void> missing() {
    static constexpr Op kNeeded[] = {Op::kForward, Op::kSendF, Op::kRecvF, Op::kSendB, Op::kRecvB};
    for (int s = 0; s <= last_; ++s) {
      const std::string rank = "rank " + std::to_string(s_.rank_of(s)) + " lacks ";
      for (int mb = 0; mb < s_.num_microbatches; ++mb) {
        for (Op op : kNeeded) {
          const bool needed = op == Op::kForward || (lowered_ && comm_needed(op, s));
          if (needed && count(op, s, mb) == 0) {
            return fail(rank + to_string({s, op, mb}));
          }
        }
        if (count(Op::kBackwardInput, s, mb) > 0 && count(Op::kBackwardWeight, s, mb) == 0) {
          return fail(rank + to_string({s, Op::kBackwardWeight, mb}) + " (its input gradient " +
                      to_string({s, Op::kBackwardInput, mb}) + " is there)");
        }
        if (count(Op::kBackward, s, mb) == 0 && count(Op::kBackwardInput, s, mb) == 0) {
          return fail(rank + to_string({s, Op::kBackward, mb}) + " (or " + to_string({s, Op::kBackwardInput, mb}) +
                      " and " + to_string({s, Op::kBackwardWeight, mb}) + ")");
        }
      }
    }
    return {};
  }

  Result<void> stuck(const detail::Dependencies& deps, const std::vector<std::size_t>& pc) const {
    std::string blocked;
    for (int r = 0; r < s_.num_ranks; ++r) {
      if (pc[r] < s_.ranks[r].size()) {
        const Action& a = s_.ranks[r][pc[r]];
        blocked += std::string(blocked.empty() ? "" : "; ") + where(r, pc[r], a) + " waits for " + deps.waiting_for(a);
      }
    }
    if (!blocked.empty()) {
      return make_error(Errc::kDeadlock, s_.name + ": deadlock: " + blocked);
    }
    return {};
  }

  const Schedule& s_;
  const ActionColumns& columns_;
  const int last_;
  bool lowered_ = false;
  std::vector<int> count_[kOps];
};

}  // namespace

std::vector<int> peak_inflight(const Schedule& schedule) {
  std::vector<int> peaks(schedule.num_ranks, 0);
  for (int r = 0; r < schedule.num_ranks; ++r) {
    int held = 0;
    for (const Action& a : schedule.ranks[r]) {
      if (a.op == Op::kForward) {
        peaks[r] = std::max(peaks[r], ++held);
      } else if (a.op == Op::kBackward || a.op == Op::kBackwardWeight) {
        --held;
      }
    }
  }
  return peaks;
}

Result<ValidationReport> validate(const Schedule& schedule, const ActionColumns& columns) {
  Checker checker(schedule, columns);
  if (auto ok = checker.structure(); !ok) {
    return ok.error();
  }
  if (auto ok = checker.execute(); !ok) {
    return ok.error();
  }
  return ValidationReport{peak_inflight(schedule)};
}

}  // namespace contend::schedule
