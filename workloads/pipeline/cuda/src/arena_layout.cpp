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

// The products the counts and the carving need, overflow-checked.
struct BufferFloats {
  std::size_t hf = 0;         // h x f: a weight matrix
  std::size_t th = 0;         // T x h: the activation-sized buffers
  std::size_t tf = 0;         // T x f: the ReLU-sized buffers
  std::size_t out_slots = 0;  // 2m
};

// h x f, T x h and T x f, or the first of them (in that order) that overflows.
Result<BufferFloats> check_products(const StageShape& s) {
  // Every product below is bounded by one of these, so checking them checks the rest.
  auto hf = checked_mul(s.hidden, s.ffn, "h x f");
  auto th = checked_mul(s.tokens, s.hidden, "T x h");
  auto tf = checked_mul(s.tokens, s.ffn, "T x f");
  for (const Result<std::size_t>* r : {&hf, &th, &tf}) {
    if (!*r) {
      return r->error();
    }
  }
  BufferFloats n;
  n.hf = *hf;
  n.th = *th;
  n.tf = *tf;
  return n;
}

// Fills the layout's float counts (params_per_layer, parameters, stash_floats); the first
// overflow, uncontexted, otherwise.
Result<BufferFloats> count_floats(const StageShape& s, ArenaLayout& a) {
  auto products = check_products(s);
  if (!products) {
    return products.error();
  }
  BufferFloats n = *products;
  // 2hf + f + h: each term is below SIZE_MAX / 4 once hf is (f, h <= hf); the sum is checked.
  auto twice_hf = checked_mul(n.hf, 2, "the parameters per layer");
  if (!twice_hf || *twice_hf > SIZE_MAX - s.ffn - s.hidden) {
    return make_error(Errc::kInvalidArgument, "the parameters per layer overflow");
  }
  a.params_per_layer = *twice_hf + s.ffn + s.hidden;
  auto parameters = checked_mul(a.params_per_layer, s.layers, "the stage's parameters");
  auto per_layer_stash = checked_mul(s.tokens, s.hidden + s.ffn, "a layer's stash");
  if (!parameters) {
    return parameters.error();
  }
  if (!per_layer_stash) {
    return per_layer_stash.error();
  }
  a.parameters = *parameters;
  auto stash = checked_mul(*per_layer_stash, s.layers, "a stash slot");
  if (!stash || (s.last && *stash > SIZE_MAX - n.th)) {
    return make_error(Errc::kInvalidArgument, "a stash slot overflows");
  }
  a.stash_floats = *stash + (s.last ? n.th : 0);
  auto out_slots = checked_mul(s.microbatches, 2, "the output slots");
  if (!out_slots) {
    return out_slots.error();
  }
  n.out_slots = *out_slots;
  return n;
}

// The device arena's spans and arena_bytes; the carver's overflow, uncontexted, otherwise.
Result<void> carve_device(const StageShape& s, const BufferFloats& n, ArenaLayout& a) {
  Carver dev;
  a.params = dev.floats(a.parameters, "the parameters");
  a.grads = dev.floats(a.parameters, "the gradients");
  a.adam_m = dev.floats(a.parameters, "Adam's first moments");
  a.adam_v = dev.floats(a.parameters, "Adam's second moments");
  for (std::size_t i = 0; i < s.microbatches && dev.error().empty(); ++i) {
    a.stash.push_back(dev.floats(a.stash_floats, "the stash slots"));
  }
  a.in = dev.floats(n.th, "the input buffer");
  a.cur = dev.floats(n.th, "the activation buffer");
  a.grad = dev.floats(n.th, "the gradient buffer");
  a.target = dev.floats(n.th, "the target buffer");
  a.relu = dev.floats(n.tf, "the ReLU buffer");
  a.dact = dev.floats(n.tf, "the pre-activation gradient buffer");
  a.loss = dev.take(sizeof(double), "the loss");
  for (std::size_t j = 0; j < n.out_slots && dev.error().empty(); ++j) {
    a.out.push_back(dev.floats(n.th, "the output slots"));
  }
  if (!dev.error().empty()) {
    return make_error(Errc::kInvalidArgument, dev.error());
  }
  a.arena_bytes = dev.used();
  return {};
}

// The pinned host buffer's spans and pinned_bytes; the carver's overflow, uncontexted, otherwise.
Result<void> carve_pinned(const BufferFloats& n, ArenaLayout& a) {
  Carver host;
  a.pinned_in = host.floats(n.th, "the pinned input buffer");
  for (std::size_t j = 0; j < n.out_slots && host.error().empty(); ++j) {
    a.pinned_out.push_back(host.floats(n.th, "the pinned output buffers"));
  }
  if (!host.error().empty()) {
    return make_error(Errc::kInvalidArgument, host.error());
  }
  a.pinned_bytes = host.used();
  return {};
}

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
  ArenaLayout a;
  auto n = count_floats(s, a);
  if (!n) {
    return fail(n.error());
  }
  if (auto ok = carve_device(s, *n, a); !ok) {
    return fail(ok.error());
  }
  if (auto ok = carve_pinned(*n, a); !ok) {
    return fail(ok.error());
  }
  return a;
}

}  // namespace contend::pipeline_cuda
