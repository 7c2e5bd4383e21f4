// "megatron": Megatron-LM's training log line (megatron/training/training.py, training_log), which
// the last rank prints every --log-interval iterations:
//    [2026-01-27 08:53:38.123456] iteration       20/     500 | consumed samples:          640 |
//    elapsed time per iteration (ms): 1234.5 | learning rate: 1.000000E-04 | global batch size:
//    32 | lm loss: 7.100000E+00 | loss scale: 1.0 | ...
// (one line). "elapsed time per iteration" is the mean over the iterations since the previous line;
// "global batch size" the samples one iteration takes (micro-batch x data-parallel x micro-batches).
// A line is a step of (iteration - the previous line's iteration) iterations: that many global
// batches in that many mean iteration times. The first line, and a line whose counter did not go
// up (the job restarted from a checkpoint), count one iteration: neither the counter nor
// "consumed samples" says how many iterations this process ran before it (both count from the
// start of a resumed run), while one iteration at the mean time has the right rate and claims no
// time the job may not have run.

#include <cstdint>

#include "experiment/output/output_parser.h"

namespace contend::runner::detail {
namespace {

constexpr std::string_view kIterationLabel = " iteration ";
constexpr std::string_view kElapsedLabel = "elapsed time per iteration (ms):";
constexpr std::string_view kBatchLabel = "global batch size:";

// The number right after `label`, or nullopt.
std::optional<double> number_after(std::string_view line, std::string_view label) {
  const std::size_t at = line.find(label);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  const auto number = read_log_number(line.substr(at + label.size()));
  return number ? std::optional<double>(number->value) : std::nullopt;
}

// The counter of " iteration <N>/<train-iters>": the first " iteration " followed by digits and a
// slash (" elapsed time per iteration (ms)" is not).
std::optional<std::int64_t> iteration_of(std::string_view line) {
  for (std::size_t at = line.find(kIterationLabel); at != std::string_view::npos;
       at = line.find(kIterationLabel, at + 1)) {
    std::size_t i = at + kIterationLabel.size();
    while (i < line.size() && line[i] == ' ') {
      ++i;
    }
    std::int64_t value = 0;
    std::size_t digits = 0;
    for (; i < line.size() && line[i] >= '0' && line[i] <= '9' && digits < 18; ++i, ++digits) {
      value = value * 10 + (line[i] - '0');
    }
    if (digits > 0 && i < line.size() && line[i] == '/') {
      return value;
    }
  }
  return std::nullopt;
}

class MegatronParser final : public OutputParser {
 public:
  std::optional<JobStep> parse(std::string_view line) override {
    const auto iteration = iteration_of(line);
    if (!iteration) {
      return std::nullopt;
    }
    const auto elapsed_ms = number_after(line, kElapsedLabel);
    const auto batch = number_after(line, kBatchLabel);
    if (!elapsed_ms || !batch || !(*elapsed_ms > 0) || !(*batch > 0)) {
      return std::nullopt;
    }
    const std::int64_t iterations = previous_ && *iteration > *previous_ ? *iteration - *previous_ : 1;
    previous_ = *iteration;
    const auto n = static_cast<double>(iterations);
    return JobStep{*batch * n, *elapsed_ms / 1000.0 * n, 0};
  }

 private:
  std::optional<std::int64_t> previous_;  // the last step line's iteration counter
};

}  // namespace

OutputParserItem megatron_parser() {
  return {{"", "megatron", "Megatron-LM's iteration line, every --log-interval iterations", {}},
          OutputParserKind{"samples/s", [](const OutputSpec&) { return std::make_unique<MegatronParser>(); }, {}}};
}

}  // namespace contend::runner::detail
