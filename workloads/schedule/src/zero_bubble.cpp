#include <algorithm>
#include <deque>

#include "chunk_order.h"
#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

// Rank r's actions: PyTorch's 1F1B skeleton with the backward split. Warm-up forwards, then each
// step a forward and an input gradient (I), and from the (r+1)-th I on the weight gradient (W) of
// the oldest I still pending; the cool-down runs the remaining Is, each with its W after the first
// r, then the Ws left over. Deferring r Ws on rank r fills the bubble 1F1B leaves there.
std::vector<Action> zero_bubble_rank(const detail::ChunkOrder& order, int r, int p, int warmup) {
  std::vector<Action> out;
  std::deque<Action> pending;  // Is whose W has not run, oldest first
  const int total = order.steps();
  const auto input_gradient = [&](int i) {
    out.push_back(order.backward(i, r, p, Op::kBackwardInput));
    pending.push_back(out.back());
    if (i >= r) {
      out.push_back({pending.front().stage, Op::kBackwardWeight, pending.front().microbatch});
      pending.pop_front();
    }
  };
  for (int i = 0; i < warmup; ++i) {
    out.push_back(order.forward(i, r, p));
  }
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back(order.forward(warmup + i, r, p));
    input_gradient(i);
  }
  for (int i = total - warmup; i < total; ++i) {
    input_gradient(i);
  }
  for (const Action& a : pending) {
    out.push_back({a.stage, Op::kBackwardWeight, a.microbatch});
  }
  return out;
}

// Why `extra` cannot run on zb:v=1 of p ranks (not one entry per rank, or warm-ups that increase
// along the pipeline), or "".
std::string zb_slack_refusal(int p, int steps, const std::vector<int>& extra, const std::vector<int>& warmups) {
  if (extra.size() != static_cast<std::size_t>(p)) {
    return "extra has " + std::to_string(extra.size()) + " entries, the pipeline has " + std::to_string(p) +
           " ranks (one entry per rank)";
  }
  for (int r = 0; r + 1 < p; ++r) {
    if (warmups[r] < warmups[r + 1] && warmups[r] < steps) {
      return "extra would deadlock: stage " + std::to_string(r) + " warms up with " + std::to_string(warmups[r]) +
             " forwards, fewer than stage " + std::to_string(r + 1) + "'s " + std::to_string(warmups[r + 1]) +
             "; extra[" + std::to_string(r + 1) + "] may be at most extra[" + std::to_string(r) + "] + 1";
    }
  }
  return "";
}

}  // namespace

Result<Schedule> interleaved_zero_bubble(int ranks, int microbatches, int v, const std::vector<int>& extra) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1 && v >= 1, "zb needs ranks, microbatches and v >= 1");
  const int p = ranks;
  const int m = microbatches;
  const std::string name = extra.empty() ? "zb:v=" + std::to_string(v) : "zb:extra=" + list_text(extra);
  if (!extra.empty() && v != 1) {
    return make_error(Errc::kInvalidArgument, "zb: extra applies to one chunk per rank (v=1)");
  }
  // PyTorch's rounds: m micro-batches in max(1, m / p) rounds of equal size.
  const int rounds = std::max(1, m / p);
  if (m % rounds != 0) {
    return make_error(Errc::kInvalidArgument,
                      name + " needs the number of micro-batches (" + std::to_string(m) +
                          ") to be a multiple of max(1, floor(m / p)) = " + std::to_string(rounds) +
                          " (PyTorch's rounds of ScheduleInterleavedZeroBubble)");
  }
  const detail::ChunkOrder order(m, v, m / rounds);
  std::vector<int> warmups(p);
  for (int r = 0; r < p; ++r) {
    // One hop per rank below, not two: the I that comes back is half a backward.
    const long long more = r < static_cast<int>(extra.size()) ? extra[r] : 0;  // a short list is refused below
    warmups[r] = static_cast<int>(std::min<long long>(order.steps(), (v - 1) * (m / rounds) + (p - 1 - r) + more));
  }
  if (const std::string why = extra.empty() ? "" : zb_slack_refusal(p, order.steps(), extra, warmups); !why.empty()) {
    return make_error(Errc::kInvalidArgument, why);
  }
  Schedule s{name, p, p * v, m, std::vector<std::vector<Action>>(p), {}};
  for (int r = 0; r < p; ++r) {
    s.ranks[r] = zero_bubble_rank(order, r, p, warmups[r]);
  }
  return s;
}

}  // namespace contend::schedule
