#pragma once
// One step of a pipeline schedule, in PyTorch pipelining's grammar: "<stage><op><microbatch>",
// e.g. "0F3" (stage 0, forward of micro-batch 3), "2B1", "1SEND_F3" (stage 1 sends its forward
// output of micro-batch 3 to stage 2), "2RECV_F3" (stage 2 receives it), "2SEND_B1", "1RECV_B1".
// Stage indices are pipeline stages, not ranks (they differ for interleaved schedules).
// Plain values; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "contend/common/result.h"

namespace contend::schedule {

// kBackward is the full backward (B); zero-bubble schedules split it into kBackwardInput (I: the
// input gradient, what is sent back) and kBackwardWeight (W: the weight gradients, deferrable).
enum class Op : std::uint8_t { kForward, kBackward, kSendF, kRecvF, kSendB, kRecvB, kBackwardInput, kBackwardWeight };

struct Action {
  int stage = 0;
  Op op = Op::kForward;
  int microbatch = 0;

  friend bool operator==(const Action&, const Action&) = default;
};

inline bool is_compute(Op op) {
  return op == Op::kForward || op == Op::kBackward || op == Op::kBackwardInput || op == Op::kBackwardWeight;
}
inline bool is_send(Op op) {
  return op == Op::kSendF || op == Op::kSendB;
}
inline bool is_recv(Op op) {
  return op == Op::kRecvF || op == Op::kRecvB;
}
// The grammar's token for `op`: "F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B".
const char* op_token(Op op);

// "1SEND_F3".
std::string to_string(const Action& action);
// Parses one action (F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B). PyTorch's computation types that
// contend does not run (UNSHARD, RESHARD, REDUCE_GRAD: FSDP and data-parallel steps) are kUnsupported
// naming them; anything else malformed is kParse quoting the text. PyTorch's composite cells
// ("(0F7;7B3)OVERLAP_F_B") are a CSV matter: csv.h expands them.
Result<Action> parse_action(std::string_view text);

}  // namespace contend::schedule
