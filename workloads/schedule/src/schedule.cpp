#include "contend/schedule/schedule.h"

#include <algorithm>

namespace contend::schedule {

std::vector<int> Schedule::peers_of(int rank) const {
  std::vector<int> out;
  for (int s = 0; s + 1 < num_stages; ++s) {
    const int a = rank_of(s);
    const int b = rank_of(s + 1);
    if (a != b && (a == rank || b == rank)) {
      out.push_back(a == rank ? b : a);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> v_placement(int ranks) {
  std::vector<int> placement(2 * static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    placement[r] = r;
    placement[2 * ranks - 1 - r] = r;
  }
  return placement;
}

Result<void> check_shape(int ranks, int microbatches, int chunks) {
  if (ranks < 1 || ranks > kMaxRanks) {
    return make_error(Errc::kInvalidArgument,
                      "stages: expected 1 to " + std::to_string(kMaxRanks) + ", got " + std::to_string(ranks));
  }
  if (microbatches < 1 || microbatches > kMaxMicrobatches) {
    return make_error(Errc::kInvalidArgument, "micro-batches: expected 1 to " + std::to_string(kMaxMicrobatches) +
                                                  ", got " + std::to_string(microbatches));
  }
  const long long total = static_cast<long long>(ranks) * microbatches * std::max(chunks, 1);
  if (total > kMaxStageMicrobatches) {
    return make_error(Errc::kInvalidArgument,
                      std::to_string(ranks) + " stages x " + std::to_string(microbatches) + " micro-batches" +
                          (chunks > 1 ? " x " + std::to_string(chunks) + " chunks" : std::string()) + " is " +
                          std::to_string(total) + " stage-micro-batches, more than the " +
                          std::to_string(kMaxStageMicrobatches) + " contend schedules");
  }
  return {};
}

bool Schedule::lowered() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const std::vector<Action>& actions) {
    return std::any_of(actions.begin(), actions.end(), [](const Action& a) { return !is_compute(a.op); });
  });
}

std::size_t Schedule::size() const {
  std::size_t n = 0;
  for (const auto& actions : ranks) {
    n += actions.size();
  }
  return n;
}

Schedule lower(const Schedule& schedule) {
  if (schedule.lowered()) {
    return schedule;
  }
  Schedule out = schedule;
  const int last = schedule.num_stages - 1;
  for (int r = 0; r < schedule.num_ranks; ++r) {
    std::vector<Action> actions;
    actions.reserve(schedule.ranks[r].size() * 3);
    for (const Action& a : schedule.ranks[r]) {
      const int s = a.stage;
      const int mb = a.microbatch;
      const bool forward = a.op == Op::kForward;
      const bool gradient = a.op == Op::kBackward || a.op == Op::kBackwardInput;
      // F receives from s-1 and sends to s+1; B and I the other way; W neither.
      const int from = forward ? s - 1 : s + 1;
      const int to = forward ? s + 1 : s - 1;
      const bool talks = forward || gradient;
      if (talks && from >= 0 && from <= last && schedule.rank_of(from) != r) {
        actions.push_back({s, forward ? Op::kRecvF : Op::kRecvB, mb});
      }
      actions.push_back(a);
      if (talks && to >= 0 && to <= last && schedule.rank_of(to) != r) {
        actions.push_back({s, forward ? Op::kSendF : Op::kSendB, mb});
      }
    }
    out.ranks[r] = std::move(actions);
  }
  return out;
}

Schedule compute_only(const Schedule& schedule) {
  Schedule out = schedule;
  for (auto& actions : out.ranks) {
    std::erase_if(actions, [](const Action& a) { return !is_compute(a.op); });
  }
  return out;
}

}  // namespace contend::schedule
