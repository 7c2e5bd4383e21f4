#include "contend/pipeline/exec/executor.h"

#include <cmath>
#include <limits>

namespace contend::pipeline {
namespace {
using Clock = std::chrono::steady_clock;
using schedule::Op;
double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}
}  // namespace

// The tensors of an iteration by (stage, micro-batch): received activations (inputs) and
// gradients (grads_out), produced outputs and input gradients (grads_in), and the completions of
// those a backend is still producing (cuda).
struct StageExecutor::Iteration {
  using Key = std::pair<int, int>;
  IterationMetrics m;
  int inflight = 0;
  std::uint64_t bytes_before = 0;
  std::map<Key, std::vector<float>> inputs, outputs, grads_out, grads_in;
  std::map<Key, Completion> done;        // of outputs still being produced
  std::map<Key, Completion> grads_done;  // of grads_in still being produced
  sim::Lane lane = sim::Lane::kCompute;
  int peer = -1;

  // Takes the tensor at `key` out of `from` (empty when absent: the first and last stages').
  static std::vector<float> take(std::map<Key, std::vector<float>>& from, Key key) {
    auto pos = from.find(key);
    if (pos == from.end()) {
      return {};
    }
    std::vector<float> out = std::move(pos->second);
    from.erase(pos);
    return out;
  }
  // The completion of the tensor at `key`, if it is still being produced.
  static Completion take(std::map<Key, Completion>& from, Key key) {
    auto pos = from.find(key);
    if (pos == from.end()) {
      return {};
    }
    Completion out = std::move(pos->second);
    from.erase(pos);
    return out;
  }
};

StageExecutor::StageExecutor(const schedule::Schedule& lowered, int rank, StageBackends backends, Transport& transport,
                             ExecutorOptions options)
    : schedule_(&lowered), rank_(rank), backends_(std::move(backends)), transport_(transport), options_(options) {
  CONTEND_CHECK(rank >= 0 && rank < lowered.num_ranks, "rank out of range");
  for (int s = 0; s < lowered.num_stages; ++s) {
    CONTEND_CHECK(lowered.rank_of(s) != rank || backends_.count(s) == 1,
                  "no backend for stage " + std::to_string(s) + " of rank " + std::to_string(rank));
  }
}

void StageExecutor::use_schedule(const schedule::Schedule& lowered, int k) {
  CONTEND_CHECK(lowered.num_ranks == schedule_->num_ranks && lowered.num_stages == schedule_->num_stages &&
                    lowered.placement == schedule_->placement,
                "use_schedule: another pipeline shape");
  schedule_ = &lowered;
  k_ = k;
}

ComputeBackend& StageExecutor::backend(int stage) const {
  return *backends_.at(stage);
}

// F, B, I or W on the action's stage. An input that comes from a stage of this rank is taken
// from it directly (completed first, when its backend is still producing it).
void StageExecutor::compute(const schedule::Action& a, Iteration& it) {
  const int s = a.stage;
  const int mb = a.microbatch;
  const int last = schedule_->num_stages - 1;
  ComputeBackend& b = backend(s);
  const auto local = [&](std::map<Iteration::Key, std::vector<float>>& from,
                         std::map<Iteration::Key, Completion>& pending, Iteration::Key key) {
    std::vector<float> t = Iteration::take(from, key);
    if (Completion c = Iteration::take(pending, key)) {
      c(t);
    }
    return t;
  };
  if (a.op == Op::kForward) {
    const bool here = s > 0 && schedule_->rank_of(s - 1) == rank_;
    std::vector<float> in = here ? local(it.outputs, it.done, {s - 1, mb}) : Iteration::take(it.inputs, {s, mb});
    std::vector<float>& out = it.outputs[{s, mb}];
    out = transport_.buffer(b.message_floats());
    b.forward(it.m.iteration, mb, in, out);
    if (Completion c = b.take_completion()) {
      it.done[{s, mb}] = std::move(c);
    }
    transport_.recycle(std::move(in));
    it.m.peak_inflight = std::max(it.m.peak_inflight, ++it.inflight);
    std::uint64_t held = 0;
    for (const auto& [stage, backend] : backends_) {
      held += backend->held_bytes();
    }
    it.m.peak_held_bytes = std::max(it.m.peak_held_bytes, held);
    ++it.m.forwards;
    return;
  }
  if (a.op == Op::kBackwardWeight) {
    b.backward_weight(it.m.iteration, mb);
    --it.inflight;
    return;
  }
  const bool here = s < last && schedule_->rank_of(s + 1) == rank_;
  std::vector<float> grad =
      here ? local(it.grads_in, it.grads_done, {s + 1, mb}) : Iteration::take(it.grads_out, {s, mb});
  std::vector<float>& grad_in = it.grads_in[{s, mb}];
  grad_in = transport_.buffer(b.message_floats());
  if (a.op == Op::kBackward) {
    b.backward(it.m.iteration, mb, grad, grad_in);
    --it.inflight;
  } else {
    b.backward_input(it.m.iteration, mb, grad, grad_in);
  }
  if (Completion c = b.take_completion()) {
    it.grads_done[{s, mb}] = std::move(c);
  }
  transport_.recycle(std::move(grad));
  ++it.m.backwards;
}

Result<void> StageExecutor::send(const schedule::Action& a, Iteration& it) {
  const bool fwd = a.op == Op::kSendF;
  const int to = fwd ? a.stage + 1 : a.stage - 1;
  it.peer = schedule_->rank_of(to);
  it.lane = sim::Lane::kSend;
  const Iteration::Key key{a.stage, a.microbatch};
  std::vector<float> data = Iteration::take(fwd ? it.outputs : it.grads_in, key);
  Completion complete = Iteration::take(fwd ? it.done : it.grads_done, key);
  return transport_.send(it.peer, Tag{fwd ? Kind::kActivation : Kind::kGradient, it.m.iteration, a.microbatch, to},
                         std::move(data), std::move(complete));
}

Result<void> StageExecutor::receive(const schedule::Action& a, Iteration& it) {
  const bool fwd = a.op == Op::kRecvF;
  it.peer = schedule_->rank_of(fwd ? a.stage - 1 : a.stage + 1);
  it.lane = sim::Lane::kRecv;
  auto got =
      transport_.recv(it.peer, Tag{fwd ? Kind::kActivation : Kind::kGradient, it.m.iteration, a.microbatch, a.stage},
                      Clock::now() + options_.timeout);
  if (!got) {
    return got.error();
  }
  (fwd ? it.inputs : it.grads_out)[{a.stage, a.microbatch}] = std::move(*got);
  return {};
}

Result<void> StageExecutor::run_action(const schedule::Action& a, Iteration& it) {
  it.lane = sim::Lane::kCompute;
  it.peer = -1;
  if (schedule::is_compute(a.op)) {
    compute(a, it);
    return {};
  }
  return schedule::is_send(a.op) ? send(a, it) : receive(a, it);
}

Result<IterationMetrics> StageExecutor::run_iteration(int iteration) {
  Iteration it;
  it.m.rank = rank_;
  it.m.iteration = iteration;
  it.m.k = k_;
  it.m.message_bytes = backends_.begin()->second->message_floats() * sizeof(float);
  it.bytes_before = transport_.bytes_sent();
  it.m.start_s = now_s();
  const auto& actions = schedule_->ranks[rank_];
  if (options_.record_trace) {
    // The oldest iterations go while this one would not fit beside the rest.
    std::size_t drop = 0;
    while (drop < trace_starts_.size() &&
           trace_.size() - trace_starts_[drop] + actions.size() > options_.max_trace_events) {
      ++drop;
    }
    if (drop > 0) {
      const std::size_t cut = drop < trace_starts_.size() ? trace_starts_[drop] : trace_.size();
      trace_.erase(trace_.begin(), trace_.begin() + static_cast<std::ptrdiff_t>(cut));
      trace_starts_.erase(trace_starts_.begin(), trace_starts_.begin() + static_cast<std::ptrdiff_t>(drop));
      for (std::size_t& start : trace_starts_) {
        start -= cut;
      }
      trace_from_ += static_cast<int>(drop);
    }
    trace_starts_.push_back(trace_.size());
  }
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const schedule::Action& a = actions[i];
    const double t0 = now_s();
    auto ok = run_action(a, it);
    const double t1 = now_s();
    if (!ok) {
      return make_error(ok.error().code, "rank " + std::to_string(rank_) + ", action " + std::to_string(i) + " (" +
                                             schedule::to_string(a) + "), iteration " + std::to_string(iteration) +
                                             ": " + ok.error().message);
    }
    (it.lane == sim::Lane::kCompute ? it.m.compute_s
     : it.lane == sim::Lane::kSend  ? it.m.send_wait_s
                                    : it.m.recv_wait_s) += t1 - t0;
    if (it.lane == sim::Lane::kSend) {
      ++it.m.sends;
    }
    if (a.op == Op::kForward) {
      it.m.forward_s += t1 - t0;
    } else if (schedule::is_compute(a.op)) {
      it.m.backward_s += t1 - t0;
    }
    if (options_.record_trace) {
      trace_.push_back({rank_, it.lane, a, t0, t1, -1, it.peer});
    }
  }
  return finish(it);
}

// The end of an iteration: unsent tensors back to the pool, the flush, the optimizer steps.
Result<IterationMetrics> StageExecutor::finish(Iteration& it) {
  // Tensors that were never sent (the last stage's outputs, the first stage's input gradients).
  for (auto* left : {&it.inputs, &it.outputs, &it.grads_out, &it.grads_in}) {
    for (auto& [key, buffer] : *left) {
      transport_.recycle(std::move(buffer));
    }
  }
  IterationMetrics& m = it.m;
  const double t_flush = now_s();
  if (auto ok = transport_.flush(); !ok) {
    return make_error(ok.error().code, "rank " + std::to_string(rank_) + ", end of iteration " +
                                           std::to_string(m.iteration) + ": " + ok.error().message);
  }
  const double t_step = now_s();
  m.flush_s = t_step - t_flush;
  m.send_wait_s += m.flush_s;
  m.loss = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [stage, b] : backends_) {
    if (options_.optimizer_step) {
      b->step();
    }
    if (!std::isnan(b->loss())) {
      m.loss = b->loss();
    }
  }
  const double t_end = now_s();
  m.step_s = t_end - t_step;
  m.compute_s += m.step_s;
  m.iteration_s = t_end - m.start_s;
  m.idle_s = std::max(0.0, m.iteration_s - m.compute_s - m.send_wait_s - m.recv_wait_s);
  m.bytes_sent = transport_.bytes_sent() - it.bytes_before;
  return m;
}

}  // namespace contend::pipeline
