#include "contend/pipeline_cuda/arena_layout.h"

#include <cstdint>
#include <string>

namespace contend::pipeline_cuda {
namespace {

// Hands out aligned spans of one allocation; remembers the first overflow.
class Carver {
 public:
  Span take(std::size_t bytes, const char* what) {
    if (!error_.empty()) {
      return {};
    }
    const std::size_t pad = (kArenaAlignment - used_ % kArenaAlignment) % kArenaAlignment;
    if (used_ > SIZE_MAX - pad || used_ + pad > SIZE_MAX - bytes) {
      error_ = std::string(what) + " overflows: the buffers before it and its " + std::to_string(bytes) +
               " bytes do not fit in size_t";
      return {};
    }
    const Span s{used_ + pad, bytes};
    used_ = s.offset + bytes;
    return s;
  }
  // Floats, checked.
  Span floats(std::size_t n, const char* what) {
    auto bytes = checked_mul(n, sizeof(float), what);
    if (!bytes) {
      error_ = bytes.error().message;
      return {};
    }
    return take(*bytes, what);
  }
  std::size_t used() const { return used_; }
  const std::string& error() const { return error_; }

 private:
  std::size_t used_ = 0;
  std::string error_;
};

}  // namespace

Result<std::size_t> checked_mul(std::size_t a, std::size_t b, const char* what) {
  std::size_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    return make_error(Errc::kInvalidArgument,
                      std::string(what) + " overflows: " + std::to_string(a) + " x " + std::to_string(b));
  }
  return out;
}

Result<ArenaLayout> plan_arena(const StageShape& s) {
  if (s.tokens == 0 || s.hidden == 0 || s.ffn == 0 || s.layers == 0 || s.microbatches == 0) {
    return make_error(Errc::kInvalidArgument, "a cuda stage needs tokens, hidden, ffn, layers and micro-batches > 0");
  }
  const auto fail = [](const Error& e) { return with_context(e, "planning the cuda stage's device memory"); };
  // Every product below is bounded by one of these, so checking them checks the rest.
  auto hf = checked_mul(s.hidden, s.ffn, "h x f");
  auto th = checked_mul(s.tokens, s.hidden, "T x h");
  auto tf = checked_mul(s.tokens, s.ffn, "T x f");
  for (const Result<std::size_t>* r : {&hf, &th, &tf}) {
    if (!*r) {
      return fail(r->error());
    }
  }
  ArenaLayout a;
  // 2hf + f + h: each term is below SIZE_MAX / 4 once hf is (f, h <= hf); the sum is checked.
  auto twice_hf = checked_mul(*hf, 2, "the parameters per layer");
  if (!twice_hf || *twice_hf > SIZE_MAX - s.ffn - s.hidden) {
    return fail(make_error(Errc::kInvalidArgument, "the parameters per layer overflow"));
  }
  a.params_per_layer = *twice_hf + s.ffn + s.hidden;
  auto parameters = checked_mul(a.params_per_layer, s.layers, "the stage's parameters");
  auto per_layer_stash = checked_mul(s.tokens, s.hidden + s.ffn, "a layer's stash");
  if (!parameters) {
    return fail(parameters.error());
  }
  if (!per_layer_stash) {
    return fail(per_layer_stash.error());
  }
  a.parameters = *parameters;
  auto stash = checked_mul(*per_layer_stash, s.layers, "a stash slot");
  if (!stash || (s.last && *stash > SIZE_MAX - *th)) {
    return fail(make_error(Errc::kInvalidArgument, "a stash slot overflows"));
  }
  a.stash_floats = *stash + (s.last ? *th : 0);
  auto out_slots = checked_mul(s.microbatches, 2, "the output slots");
  if (!out_slots) {
    return fail(out_slots.error());
  }

  Carver dev;
  a.params = dev.floats(a.parameters, "the parameters");
  a.grads = dev.floats(a.parameters, "the gradients");
  a.adam_m = dev.floats(a.parameters, "Adam's first moments");
  a.adam_v = dev.floats(a.parameters, "Adam's second moments");
  for (std::size_t i = 0; i < s.microbatches && dev.error().empty(); ++i) {
    a.stash.push_back(dev.floats(a.stash_floats, "the stash slots"));
  }
  a.in = dev.floats(*th, "the input buffer");
  a.cur = dev.floats(*th, "the activation buffer");
  a.grad = dev.floats(*th, "the gradient buffer");
  a.target = dev.floats(*th, "the target buffer");
  a.relu = dev.floats(*tf, "the ReLU buffer");
  a.dact = dev.floats(*tf, "the pre-activation gradient buffer");
  a.loss = dev.take(sizeof(double), "the loss");
  for (std::size_t j = 0; j < *out_slots && dev.error().empty(); ++j) {
    a.out.push_back(dev.floats(*th, "the output slots"));
  }
  if (!dev.error().empty()) {
    return fail(make_error(Errc::kInvalidArgument, dev.error()));
  }
  a.arena_bytes = dev.used();

  Carver host;
  a.pinned_in = host.floats(*th, "the pinned input buffer");
  for (std::size_t j = 0; j < *out_slots && host.error().empty(); ++j) {
    a.pinned_out.push_back(host.floats(*th, "the pinned output buffers"));
  }
  if (!host.error().empty()) {
    return fail(make_error(Errc::kInvalidArgument, host.error()));
  }
  a.pinned_bytes = host.used();
  return a;
}

}  // namespace contend::pipeline_cuda
