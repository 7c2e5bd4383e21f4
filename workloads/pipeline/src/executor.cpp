#include "contend/pipeline/executor.h"

#include <map>

namespace contend::pipeline {
namespace {
using Clock = std::chrono::steady_clock;
double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}
}  // namespace

int schedule_k(const std::string& name, int microbatches) {
  if (name == "1f1b") {
    return 1;
  }
  if (name == "gpipe") {
    return microbatches;
  }
  if (name.rfind("kfkb:k=", 0) == 0) {
    return std::atoi(name.c_str() + 7);
  }
  return 0;
}

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

Result<IterationMetrics> StageExecutor::run_iteration(int iteration) {
  using schedule::Op;
  IterationMetrics m;
  m.rank = rank_;
  m.iteration = iteration;
  m.k = k_;
  m.message_bytes = backend_.message_floats() * sizeof(float);
  int inflight = 0;
  const std::uint64_t bytes_before = transport_.bytes_sent();
  std::map<int, std::vector<float>> inputs, outputs, grads_out, grads_in;
  std::map<int, Completion> outputs_done, grads_in_done;  // tensors still being copied
  const auto& actions = schedule_->ranks[rank_];
  const double t_start = now_s();
  m.start_s = t_start;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const schedule::Action& a = actions[i];
    const int mb = a.microbatch;
    const double t0 = now_s();
    Result<void> ok;
    sim::Lane lane = sim::Lane::kCompute;
    int peer = -1;
    switch (a.op) {
      case Op::kForward:
        outputs[mb] = transport_.buffer(backend_.message_floats());
        backend_.forward(iteration, mb, inputs[mb], outputs[mb]);
        if (Completion c = backend_.take_completion()) {
          outputs_done[mb] = std::move(c);
        }
        transport_.recycle(std::move(inputs[mb]));
        inputs.erase(mb);
        m.peak_held_bytes = std::max(m.peak_held_bytes, backend_.held_bytes());
        m.peak_inflight = std::max(m.peak_inflight, ++inflight);
        m.forward_s += now_s() - t0;
        ++m.forwards;
        break;
      case Op::kBackward:
        grads_in[mb] = transport_.buffer(backend_.message_floats());
        backend_.backward(iteration, mb, grads_out[mb], grads_in[mb]);
        if (Completion c = backend_.take_completion()) {
          grads_in_done[mb] = std::move(c);
        }
        transport_.recycle(std::move(grads_out[mb]));
        grads_out.erase(mb);
        --inflight;
        m.backward_s += now_s() - t0;
        ++m.backwards;
        break;
      case Op::kSendF:
      case Op::kSendB: {
        const bool fwd = a.op == Op::kSendF;
        auto& from = fwd ? outputs : grads_in;
        auto& done = fwd ? outputs_done : grads_in_done;
        peer = fwd ? rank_ + 1 : rank_ - 1;
        Completion complete;
        if (auto it = done.find(mb); it != done.end()) {
          complete = std::move(it->second);
          done.erase(it);
        }
        ok = transport_.send(peer, Tag{fwd ? Kind::kActivation : Kind::kGradient, iteration, mb}, std::move(from[mb]),
                             std::move(complete));
        from.erase(mb);
        lane = sim::Lane::kSend;
        break;
      }
      case Op::kRecvF:
      case Op::kRecvB: {
        const bool fwd = a.op == Op::kRecvF;
        peer = fwd ? rank_ - 1 : rank_ + 1;
        auto got = transport_.recv(peer, Tag{fwd ? Kind::kActivation : Kind::kGradient, iteration, mb},
                                   Clock::now() + options_.timeout);
        if (got) {
          (fwd ? inputs : grads_out)[mb] = std::move(*got);
        } else {
          ok = got.error();
        }
        lane = sim::Lane::kRecv;
        break;
      }
    }
    const double t1 = now_s();
    if (!ok) {
      return make_error(ok.error().code, "rank " + std::to_string(rank_) + ", action " + std::to_string(i) + " (" +
                                             schedule::to_string(a) + "), iteration " + std::to_string(iteration) +
                                             ": " + ok.error().message);
    }
    if (lane == sim::Lane::kCompute) {
      m.compute_s += t1 - t0;
    } else if (lane == sim::Lane::kSend) {
      m.send_wait_s += t1 - t0;
    } else {
      m.recv_wait_s += t1 - t0;
    }
    if (options_.record_trace) {
      trace_.push_back({rank_, lane, a, t0, t1, -1, peer});
    }
  }
  // Tensors that were never sent (the last stage's outputs, the first stage's input gradients).
  for (auto* left : {&inputs, &outputs, &grads_out, &grads_in}) {
    for (auto& [mb, buffer] : *left) {
      transport_.recycle(std::move(buffer));
    }
  }
  const double t_flush = now_s();
  if (auto ok = transport_.flush(); !ok) {
    return make_error(ok.error().code, "rank " + std::to_string(rank_) + ", end of iteration " +
                                           std::to_string(iteration) + ": " + ok.error().message);
  }
  const double t_step = now_s();
  m.send_wait_s += t_step - t_flush;
  if (options_.optimizer_step) {
    backend_.step();
  }
  const double t_end = now_s();
  m.compute_s += t_end - t_step;
  m.iteration_s = t_end - t_start;
  m.idle_s = std::max(0.0, m.iteration_s - m.compute_s - m.send_wait_s - m.recv_wait_s);
  m.bytes_sent = transport_.bytes_sent() - bytes_before;
  m.loss = backend_.loss();
  return m;
}

}  // namespace contend::pipeline
