#include <algorithm>

#include "chunk_order.h"
#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

// Megatron-LM's conditions on the group (forward_backward_pipelining_with_interleaving), plus
// PyTorch's one group of all m < p micro-batches; "" when `group` fits.
std::string group_error(int p, int m, int group, bool given) {
  const std::string mb = std::to_string(m);
  const std::string ranks = std::to_string(p);
  if (!given) {
    return m % p == 0 ? ""
                      : "needs the number of micro-batches (" + mb + ") to be a multiple of the number of ranks (" +
                            ranks + "), as in Megatron-LM (or a group that fits, see docs/schedules.md)";
  }
  const std::string g = "group (" + std::to_string(group) + ")";
  if (group > m) {
    return g + " must not exceed the number of micro-batches (" + mb + "), as in Megatron-LM";
  }
  if (group < p && group != m) {
    return g + " must be at least the number of ranks (" + ranks + "), as in Megatron-LM, or hold all " + mb +
           " micro-batches";
  }
  const int last = m % group;
  if (last != 0 && last < p) {
    return "the last group holds m mod group = " + std::to_string(last) +
           " micro-batches; Megatron-LM needs 0 or at least the number of ranks (" + ranks + ")";
  }
  return "";
}

}  // namespace

Result<Schedule> interleaved_1f1b(int ranks, int microbatches, int v, int group) {
  CONTEND_CHECK(ranks >= 1 && microbatches >= 1 && group >= 0, "interleaved needs ranks, microbatches >= 1");
  const int p = ranks;
  const int g = group == 0 ? p : group;
  const std::string name = "interleaved:v=" + std::to_string(v) + (group == 0 ? "" : ",group=" + std::to_string(g));
  if (v < 2) {
    return make_error(Errc::kInvalidArgument, name +
                                                  ": v is the number of model chunks per rank and must be >= 2 "
                                                  "(one chunk per rank is plain 1f1b)");
  }
  if (const std::string why = group_error(p, microbatches, g, group != 0); !why.empty()) {
    return make_error(Errc::kInvalidArgument, name + (group == 0 ? " " : ": ") + why);
  }
  Schedule s{name, p, p * v, microbatches, std::vector<std::vector<Action>>(p), {}};
  const detail::ChunkOrder order(microbatches, v, g);
  const int total = order.steps();  // chunk-steps per rank, each direction
  for (int r = 0; r < p; ++r) {
    auto& out = s.ranks[r];
    // Megatron-LM's warm-up (get_pp_rank_microbatches): the first backward reaches rank r after
    // the other chunks' first groups and two hops per rank below it.
    const int warmup = std::min(total, 2 * (p - r - 1) + (v - 1) * g);
    for (int i = 0; i < warmup; ++i) {
      out.push_back(order.forward(i, r, p));
    }
    for (int i = 0; i < total - warmup; ++i) {
      out.push_back(order.forward(warmup + i, r, p));
      out.push_back(order.backward(i, r, p, Op::kBackward));
    }
    for (int i = total - warmup; i < total; ++i) {
      out.push_back(order.backward(i, r, p, Op::kBackward));
    }
  }
  return s;
}

}  // namespace contend::schedule
