#include "contend/schedule/action.h"

#include <cctype>
#include <charconv>

namespace contend::schedule {

const char* op_token(Op op) {
  switch (op) {
    case Op::kForward:
      return "F";
    case Op::kBackward:
      return "B";
    case Op::kSendF:
      return "SEND_F";
    case Op::kRecvF:
      return "RECV_F";
    case Op::kSendB:
      return "SEND_B";
    case Op::kRecvB:
      return "RECV_B";
    case Op::kBackwardInput:
      return "I";
    case Op::kBackwardWeight:
      return "W";
  }
  return "?";
}

std::string to_string(const Action& action) {
  return std::to_string(action.stage) + op_token(action.op) + std::to_string(action.microbatch);
}

namespace {

bool parse_int(std::string_view digits, int& out) {
  if (digits.empty() || digits.size() > 9) {
    return false;
  }
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc() && ptr == digits.data() + digits.size();
}

}  // namespace

Result<Action> parse_action(std::string_view text) {
  const auto fail = [&](const std::string& why) {
    return make_error(Errc::kParse, "expected an action like \"0F3\" or \"1SEND_F3\", got \"" + std::string(text) +
                                        "\" (" + why + ")");
  };
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    ++i;
  }
  size_t j = i;
  while (j < text.size() && !std::isdigit(static_cast<unsigned char>(text[j]))) {
    ++j;
  }
  Action a;
  if (!parse_int(text.substr(0, i), a.stage)) {
    return fail("no stage number");
  }
  const std::string_view token = text.substr(i, j - i);
  static constexpr Op kOps[] = {Op::kForward, Op::kBackward, Op::kSendF,         Op::kRecvF,
                                Op::kSendB,   Op::kRecvB,    Op::kBackwardInput, Op::kBackwardWeight};
  bool found = false;
  for (Op op : kOps) {
    if (token == op_token(op)) {
      a.op = op;
      found = true;
    }
  }
  if (!found) {
    if (token == "UNSHARD" || token == "RESHARD" || token == "REDUCE_GRAD") {
      return make_error(Errc::kUnsupported,
                        "action \"" + std::string(text) + "\": computation type " + std::string(token) +
                            " is PyTorch's (FSDP or data parallel) but not contend's (contend runs F, B, I and W)");
    }
    return fail("unknown computation type \"" + std::string(token) + "\"");
  }
  if (!parse_int(text.substr(j), a.microbatch)) {
    return fail("no micro-batch number at the end");
  }
  return a;
}

}  // namespace contend::schedule
