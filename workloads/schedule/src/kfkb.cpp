#include <algorithm>

#include "contend/schedule/generators.h"

namespace contend::schedule {

std::string list_text(const std::vector<int>& extra) {
  std::string out;
  for (const int e : extra) {
    out += (out.empty() ? "" : "/") + std::to_string(e);
  }
  return out;
}

namespace {

// Why stage r waits forever: what slack_refusal says when w[r] < w[r+1] and w[r] + k < m.
std::string deadlock_text(int r, const std::vector<int>& w, int k, int microbatches, const std::vector<int>& extra) {
  const auto n = [](long long v) { return std::to_string(v); };
  const std::string next = n(r + 1);
  const long long next_forwards = std::min<long long>(microbatches, static_cast<long long>(w[r + 1]) + k);
  return "would deadlock: stage " + n(r) + " warms up with " + n(w[r]) + " forwards, fewer than stage " + next + "'s " +
         n(w[r + 1]) + ": it runs " + n(static_cast<long long>(w[r]) + k) +
         " forwards, then waits for a backward that stage " + next + " runs only after " + n(next_forwards) +
         "; extra[" + next + "] may be at most extra[" + n(r) + "] + k = " + n(static_cast<long long>(extra[r]) + k);
}

// Why `extra` cannot run (not one entry per rank, or a deadlock), or "". Stage r's first backward
// comes after min(m, w_r + k) forwards and needs stage r+1's, which comes after min(m, w_{r+1} + k)
// of stage r's forwards: a deadlock exactly when w_r < w_{r+1} and w_r + k < m (later groups
// keep the same difference). docs/schedules.md: Slackness.
std::string slack_refusal(int ranks, int microbatches, int k, const std::vector<int>& extra) {
  const std::string quoted = "extra=" + list_text(extra);
  if (extra.size() != static_cast<std::size_t>(ranks)) {
    return quoted + " has " + std::to_string(extra.size()) + " entries, the pipeline has " + std::to_string(ranks) +
           " ranks (one entry per rank)";
  }
  const std::vector<int> w = slack_warmups(ranks, microbatches, k, extra);
  for (int r = 0; r + 1 < ranks; ++r) {
    if (w[r] < w[r + 1] && static_cast<long long>(w[r]) + k < microbatches) {
      return quoted + " " + deadlock_text(r, w, k, microbatches, extra);
    }
  }
  return "";
}

}  // namespace

std::vector<int> slack_warmups(int ranks, int microbatches, int k, const std::vector<int>& extra) {
  std::vector<int> w(ranks);
  for (int r = 0; r < ranks; ++r) {
    const long long more = r < static_cast<int>(extra.size()) ? extra[r] : 0;
    // 64-bit product: k * (p - s - 1) overflows int for large k.
    w[r] = static_cast<int>(std::min<long long>(microbatches, static_cast<long long>(k) * (ranks - r - 1) + more));
  }
  return w;
}

std::string slack_name(int k, const std::vector<int>& extra) {
  const bool zeros = std::all_of(extra.begin(), extra.end(), [](int e) { return e == 0; });
  if (zeros) {
    return "kfkb:k=" + std::to_string(k);
  }
  return (k == 1 ? "slack:extra=" : "kfkb:k=" + std::to_string(k) + ",extra=") + list_text(extra);
}

Result<Schedule> slack(int ranks, int microbatches, int k, const std::vector<int>& extra) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1 && k >= 1, "kfkb needs ranks, microbatches and k >= 1");
  CONTEND_CHECK(std::all_of(extra.begin(), extra.end(), [](int e) { return e >= 0; }), "kfkb: negative extra");
  if (const std::string why = extra.empty() ? "" : slack_refusal(ranks, microbatches, k, extra); !why.empty()) {
    return make_error(Errc::kInvalidArgument, why);
  }
  Schedule s{slack_name(k, extra), ranks, ranks, microbatches, std::vector<std::vector<Action>>(ranks), {}};
  const std::vector<int> warmup = slack_warmups(ranks, microbatches, k, extra);
  for (int r = 0; r < ranks; ++r) {
    auto& out = s.ranks[r];
    int f = 0;
    int b = 0;
    while (f < warmup[r]) {
      out.push_back({r, Op::kForward, f++});
    }
    while (f < microbatches) {
      for (const int end = std::min(microbatches, f + k); f < end;) {
        out.push_back({r, Op::kForward, f++});
      }
      for (const int end = std::min(microbatches, b + k); b < end;) {
        out.push_back({r, Op::kBackward, b++});
      }
    }
    while (b < microbatches) {
      out.push_back({r, Op::kBackward, b++});
    }
  }
  return s;
}

Schedule kfkb(int ranks, int microbatches, int k) {
  return slack(ranks, microbatches, k, {}).value();
}

}  // namespace contend::schedule
