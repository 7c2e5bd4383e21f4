#include "contend/pipeline/executor.h"

#include <map>

namespace contend::pipeline {
namespace {
using Clock = std::chrono::steady_clock;
double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}
}  // namespace

struct StageExecutor::Iteration {
  IterationMetrics m;
  int inflight = 0;
  std::uint64_t bytes_before = 0;
  // Tensors by micro-batch: received activations and gradients, produced outputs and input
  // gradients, and the completions of those still being copied (cuda).
  std::map<int, std::vector<float>> inputs, outputs, grads_out, grads_in;
  std::map<int, Completion> outputs_done, grads_in_done;
  sim::Lane lane = sim::Lane::kCompute;
  int peer = -1;
};

StageExecutor::StageExecutor(const schedule::Schedule& lowered, int rank, ComputeBackend& backend, Transport& transport,
                             ExecutorOptions options)
    : schedule_(&lowered), rank_(rank), backend_(backend), transport_(transport), options_(options) {
  CONTEND_CHECK(lowered.num_stages == lowered.num_ranks, "the runtime runs one stage per rank");
  CONTEND_CHECK(rank >= 0 && rank < lowered.num_ranks, "rank out of range");
}

void StageExecutor::use_schedule(const schedule::Schedule& lowered, int k) {
  CONTEND_CHECK(lowered.num_ranks == schedule_->num_ranks && lowered.num_stages == lowered.num_ranks,
                "use_schedule: another pipeline shape");
  schedule_ = &lowered;
  k_ = k;
}

Result<void> StageExecutor::run_action(const schedule::Action& a, Iteration& it) {
  using schedule::Op;
  const int mb = a.microbatch;
  const int iteration = it.m.iteration;
  it.lane = sim::Lane::kCompute;
  it.peer = -1;
  switch (a.op) {
    case Op::kForward:
      it.outputs[mb] = transport_.buffer(backend_.message_floats());
      backend_.forward(iteration, mb, it.inputs[mb], it.outputs[mb]);
      if (Completion c = backend_.take_completion()) {
        it.outputs_done[mb] = std::move(c);
      }
      transport_.recycle(std::move(it.inputs[mb]));
      it.inputs.erase(mb);
      it.m.peak_held_bytes = std::max(it.m.peak_held_bytes, backend_.held_bytes());
      it.m.peak_inflight = std::max(it.m.peak_inflight, ++it.inflight);
      ++it.m.forwards;
      return {};
    case Op::kBackward:
      it.grads_in[mb] = transport_.buffer(backend_.message_floats());
      backend_.backward(iteration, mb, it.grads_out[mb], it.grads_in[mb]);
      if (Completion c = backend_.take_completion()) {
        it.grads_in_done[mb] = std::move(c);
      }
      transport_.recycle(std::move(it.grads_out[mb]));
      it.grads_out.erase(mb);
      --it.inflight;
      ++it.m.backwards;
      return {};
    case Op::kSendF:
    case Op::kSendB: {
      const bool fwd = a.op == Op::kSendF;
      auto& from = fwd ? it.outputs : it.grads_in;
      auto& done = fwd ? it.outputs_done : it.grads_in_done;
      it.peer = fwd ? rank_ + 1 : rank_ - 1;
      it.lane = sim::Lane::kSend;
      Completion complete;
      if (auto pos = done.find(mb); pos != done.end()) {
        complete = std::move(pos->second);
        done.erase(pos);
      }
      auto ok = transport_.send(it.peer, Tag{fwd ? Kind::kActivation : Kind::kGradient, iteration, mb},
                                std::move(from[mb]), std::move(complete));
      from.erase(mb);
      return ok;
    }
    case Op::kRecvF:
    case Op::kRecvB: {
      const bool fwd = a.op == Op::kRecvF;
      it.peer = fwd ? rank_ - 1 : rank_ + 1;
      it.lane = sim::Lane::kRecv;
      auto got = transport_.recv(it.peer, Tag{fwd ? Kind::kActivation : Kind::kGradient, iteration, mb},
                                 Clock::now() + options_.timeout);
      if (!got) {
        return got.error();
      }
      (fwd ? it.inputs : it.grads_out)[mb] = std::move(*got);
      return {};
    }
  }
  return {};
}

Result<IterationMetrics> StageExecutor::run_iteration(int iteration) {
  Iteration it;
  it.m.rank = rank_;
  it.m.iteration = iteration;
  it.m.k = k_;
  it.m.message_bytes = backend_.message_floats() * sizeof(float);
  it.bytes_before = transport_.bytes_sent();
  it.m.start_s = now_s();
  const auto& actions = schedule_->ranks[rank_];
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
    if (a.op == schedule::Op::kForward) {
      it.m.forward_s += t1 - t0;
    } else if (a.op == schedule::Op::kBackward) {
      it.m.backward_s += t1 - t0;
    }
    if (options_.record_trace) {
      trace_.push_back({rank_, it.lane, a, t0, t1, -1, it.peer});
    }
  }
  return finish(it);
}

// The end of an iteration: unsent tensors back to the pool, the flush, the optimizer step.
Result<IterationMetrics> StageExecutor::finish(Iteration& it) {
  // Tensors that were never sent (the last stage's outputs, the first stage's input gradients).
  for (auto* left : {&it.inputs, &it.outputs, &it.grads_out, &it.grads_in}) {
    for (auto& [mb, buffer] : *left) {
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
  m.send_wait_s += t_step - t_flush;
  if (options_.optimizer_step) {
    backend_.step();
  }
  const double t_end = now_s();
  m.compute_s += t_end - t_step;
  m.iteration_s = t_end - m.start_s;
  m.idle_s = std::max(0.0, m.iteration_s - m.compute_s - m.send_wait_s - m.recv_wait_s);
  m.bytes_sent = transport_.bytes_sent() - it.bytes_before;
  m.loss = backend_.loss();
  return m;
}

}  // namespace contend::pipeline
