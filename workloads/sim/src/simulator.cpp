#include "contend/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "contend/common/units.h"

namespace contend::sim {
namespace {

using schedule::Action;
using schedule::Op;
using schedule::Schedule;

constexpr double kNotYet = -1.0;

class Simulation {
 public:
  Simulation(const Schedule& s, const SimConfig& c) : s_(s), c_(c), m_(s.num_microbatches), last_(s.num_stages - 1) {}

  Result<SimResult> run() {
    if (auto ok = check(); !ok) {
      return ok.error();
    }
    setup();
    std::vector<int> stack;
    std::vector<char> queued(s_.num_ranks, 1);
    for (int r = s_.num_ranks - 1; r >= 0; --r) {
      stack.push_back(r);
    }
    while (!stack.empty()) {
      const int r = stack.back();
      stack.pop_back();
      queued[r] = 0;
      auto woke = advance(r);
      if (!woke) {
        return woke.error();
      }
      for (int w : wake_) {
        if (!queued[w]) {
          queued[w] = 1;
          stack.push_back(w);
        }
      }
      wake_.clear();
    }
    return finish();
  }

 private:
  struct Link {
    const LinkModel* model;
    double free_s;
    double tokens_bits;  // token bucket (a burst depth > 0), as of free_s
    int from;
    int to;
    bool stalls = false;           // whether its stall trace is ever above 0
    std::vector<double> sent_s{};  // when each transfer so far was sent (LinkModel::stall_overlaps_wire), in order;
                                   // kept where it stalls
  };

  std::size_t at(int stage, int mb) const { return static_cast<std::size_t>(stage) * m_ + mb; }
  bool cross(int a, int b) const { return rank_[a] != rank_[b]; }

  // Checks the schedule and the costs, and tabulates each stage's rank (read per action).
  Result<void> check() {
    if (s_.num_ranks < 1 || static_cast<int>(s_.ranks.size()) != s_.num_ranks || s_.num_stages < 1 || m_ < 1) {
      return make_error(Errc::kInvalidArgument, s_.name + ": malformed schedule (ranks, stages or micro-batches < 1)");
    }
    rank_.resize(s_.num_stages);
    for (int st = 0; st < s_.num_stages; ++st) {
      rank_[st] = s_.rank_of(st);  // in range: simulate() checked the placement
    }
    if (static_cast<int>(c_.stages.size()) != s_.num_stages) {
      return make_error(Errc::kInvalidArgument, s_.name + ": the simulation has costs for " +
                                                    std::to_string(c_.stages.size()) + " stages, the schedule has " +
                                                    std::to_string(s_.num_stages));
    }
    if (c_.costs.size() > 1 && static_cast<int>(c_.costs.size()) != s_.num_ranks) {
      return make_error(Errc::kInvalidArgument, s_.name + ": runtime costs for " + std::to_string(c_.costs.size()) +
                                                    " ranks, the schedule has " + std::to_string(s_.num_ranks));
    }
    for (int r = 0; r < s_.num_ranks; ++r) {
      for (const Action& a : s_.ranks[r]) {
        if (a.stage < 0 || a.stage > last_ || a.microbatch < 0 || a.microbatch >= m_ || rank_[a.stage] != r) {
          return make_error(Errc::kInvalidArgument,
                            s_.name + ": rank " + std::to_string(r) + " holds " + schedule::to_string(a) +
                                ", which is out of range or on the wrong rank (validate the schedule)");
        }
      }
    }
    return {};
  }

  void setup() {
    const std::size_t cells = static_cast<std::size_t>(s_.num_stages) * m_;
    for (auto* v : {&f_end_, &b_end_, &recv_f_, &recv_b_, &arrive_f_, &arrive_b_}) {
      v->assign(cells, kNotYet);
    }
    if (c_.record_trace) {
      flow_f_.assign(cells, -1);
      flow_b_.assign(cells, -1);
    }
    pc_.assign(s_.num_ranks, 0);
    lane_.assign(s_.num_ranks, 0.0);
    held_.assign(s_.num_ranks, 0);
    held_bytes_.assign(s_.num_ranks, 0);
    stats_.assign(s_.num_ranks, RankStats{});
    // One link per directed rank pair that carries traffic.
    fwd_link_.assign(s_.num_stages, -1);
    bwd_link_.assign(s_.num_stages, -1);
    links_.reserve(2 * static_cast<std::size_t>(s_.num_stages));
    const auto link_id = [&](int from, int to) {  // a pipeline's links are few: found by a scan
      for (std::size_t i = 0; i < links_.size(); ++i) {
        if (links_[i].from == from && links_[i].to == to) {
          return static_cast<int>(i);
        }
      }
      auto o = c_.links.find({from, to});
      const LinkModel* model = o == c_.links.end() ? &c_.default_link : &o->second;
      const auto& stall = model->stall_s.points();
      links_.push_back(
          {model, 0.0, 8.0 * model->burst_bytes.rate_at(0), from, to,
           std::any_of(stall.begin(), stall.end(), [](const RateTrace::Point& p) { return p.rate_bps > 0; })});
      return static_cast<int>(links_.size()) - 1;
    };
    for (int st = 0; st <= last_; ++st) {
      if (st < last_ && cross(st, st + 1)) {
        fwd_link_[st] = link_id(rank_[st], rank_[st + 1]);
      }
      if (st > 0 && cross(st, st - 1)) {
        bwd_link_[st] = link_id(rank_[st], rank_[st - 1]);
      }
    }
  }

  // The time the input of compute action `a` is ready, or kNotYet.
  double input_ready(const Action& a) const {
    const int st = a.stage;
    const int mb = a.microbatch;
    if (a.op == Op::kBackwardWeight) {
      return b_end_[at(st, mb)];  // after its stage's I
    }
    if (a.op == Op::kForward) {
      if (st == 0) {
        return 0.0;
      }
      return cross(st, st - 1) ? recv_f_[at(st, mb)] : f_end_[at(st - 1, mb)];
    }
    const double own = f_end_[at(st, mb)];
    if (own == kNotYet) {
      return kNotYet;
    }
    if (st == last_) {
      return own;
    }
    const double grad = cross(st, st + 1) ? recv_b_[at(st, mb)] : b_end_[at(st + 1, mb)];
    return grad == kNotYet ? kNotYet : std::max(own, grad);
  }

  void record(int r, Lane lane, const Action& a, double start, double end, int flow, int peer) {
    if (c_.record_trace) {
      trace_.push_back({r, lane, a, start, end, flow, peer});
    }
  }

  const RuntimeCosts& costs(int r) const {
    static const RuntimeCosts kNone;
    return c_.costs.empty() ? kNone : c_.costs[c_.costs.size() == 1 ? 0 : r];
  }

  // How long compute action `a` takes on its stage.
  static double duration(const StageCost& cost, Op op) {
    switch (op) {
      case Op::kForward:
        return cost.forward_s;
      case Op::kBackwardInput:
        return cost.backward_s * (1 - cost.weight_fraction);
      case Op::kBackwardWeight:
        return cost.backward_s * cost.weight_fraction;
      default:
        return cost.backward_s;
    }
  }

  // The stash is held from F until the backward is whole: B, or W after I.
  void compute(int r, const Action& a, double ready) {
    const StageCost& cost = c_.stages[a.stage];
    const double start = std::max(lane_[r], ready);
    const double dur = duration(cost, a.op);
    stats_[r].wait_s += start - lane_[r];
    stats_[r].busy_s += dur;
    lane_[r] = start + dur;
    if (a.op == Op::kForward) {
      f_end_[at(a.stage, a.microbatch)] = lane_[r];
      stats_[r].peak_inflight = std::max(stats_[r].peak_inflight, ++held_[r]);
      held_bytes_[r] += cost.stash_bytes;
      stats_[r].peak_memory_bytes = std::max(stats_[r].peak_memory_bytes, held_bytes_[r]);
    } else {
      if (a.op != Op::kBackwardWeight) {
        b_end_[at(a.stage, a.microbatch)] = lane_[r];
      }
      if (a.op != Op::kBackwardInput) {
        --held_[r];
        held_bytes_[r] -= cost.stash_bytes;
      }
    }
    record(r, Lane::kCompute, a, start, lane_[r], -1, -1);
  }

  Result<void> send(int r, const Action& a, double produced) {
    const bool fwd = a.op == Op::kSendF;
    const StageCost& cost = c_.stages[a.stage];
    const std::uint64_t bytes = fwd ? cost.activation_bytes : cost.gradient_bytes;
    Link& link = links_[fwd ? fwd_link_[a.stage] : bwd_link_[a.stage]];
    // The hand-off occupies the sending lane; the tensor enters the link after it, once the link
    // is free and its stall has passed.
    lane_[r] = std::max(lane_[r], produced) + costs(r).send_s;
    const double bits = 8.0 * static_cast<double>(bytes);
    const double ready = wire_start(link, lane_[r]);
    auto [start, end, tokens] = on_wire(link, ready, bits);
    if (!link.model->ports.empty()) {
      port_wait_[{link.from, link.to}] += start - ready;
    }
    if (c_.blocking_sends) {
      lane_[r] = start;  // a blocking send returns once its tensor is on the wire
    }
    link.tokens_bits = tokens;
    if (!std::isfinite(end)) {
      return make_error(Errc::kInvalidArgument, s_.name + ": " + schedule::to_string(a) +
                                                    " never arrives: the rate of link " + std::to_string(link.from) +
                                                    "->" + std::to_string(link.to) + " ends at 0 after " +
                                                    format_seconds(start));
    }
    link.free_s = end;
    if (link.stalls) {
      link.sent_s.push_back(link.model->stall_overlaps_wire ? start : end);
    }
    for (int p : link.model->ports) {
      port_busy_[p].emplace_back(start, end);
    }
    const double arrival = end + link.model->latency_s;
    const int peer_stage = fwd ? a.stage + 1 : a.stage - 1;
    (fwd ? arrive_f_ : arrive_b_)[at(peer_stage, a.microbatch)] = arrival;
    stats_[r].bytes_sent += bytes;
    int flow = -1;
    if (c_.record_trace) {
      flow = next_flow_++;
      (fwd ? flow_f_ : flow_b_)[at(peer_stage, a.microbatch)] = flow;
    }
    record(r, Lane::kSend, a, start, arrival, flow, link.to);
    wake_.push_back(link.to);
    return {};
  }

  // A transfer of `bits` ready at `ready` on `link`: when it starts, when it leaves the wire and
  // the link's tokens after it. It starts once every port the link shares has a slot free for the
  // whole transfer (ranks are simulated out of time order, so a port keeps its intervals).
  struct OnWire {
    double start;
    double end;
    double tokens_bits;
  };
  OnWire on_wire(const Link& link, double ready, double bits) const {
    for (double start = ready;;) {
      OnWire w{start, start, link.tokens_bits};
      const double depth = 8.0 * link.model->burst_bytes.rate_at(start);
      if (depth <= 0) {
        w.end = link.model->rate.finish_time(start, bits);
      } else {
        // Tokens earned while idle, up to the bucket's depth now; what they cover passes at once.
        w.tokens_bits = std::min(depth, link.tokens_bits + link.model->rate.bits_between(link.free_s, start));
        const double covered = std::min(bits, w.tokens_bits);
        w.tokens_bits -= covered;
        w.end = link.model->rate.finish_time(start + covered / link.model->line_bps, bits - covered);
      }
      const double busy_until = ports_free(link.model->ports, w.start, w.end);
      if (busy_until <= start || !std::isfinite(w.end)) {
        return w;
      }
      start = busy_until;
    }
  }

  int slots(int port) const {
    const auto it = c_.port_slots.find(port);
    return it == c_.port_slots.end() ? 1 : std::max(1, it->second);
  }

  // When a transfer over [start, end) on `ports` may try again: start when every port has a slot
  // free throughout; else, on a port of one slot, the latest end of the transfers it overlaps,
  // and on a port of more, the earliest (one of them must end before another fits).
  double ports_free(const std::vector<int>& ports, double start, double end) const {
    double out = start;
    for (int p : ports) {
      const auto it = port_busy_.find(p);
      if (it == port_busy_.end()) {
        continue;
      }
      std::vector<std::pair<double, int>> edges;  // (time, +1 at a start, -1 at an end)
      double first_end = std::numeric_limits<double>::infinity();
      double last_end = start;
      for (const auto& [s, e] : it->second) {
        if (s < end && e > start) {
          edges.emplace_back(std::max(s, start), 1);
          edges.emplace_back(e, -1);
          first_end = std::min(first_end, e);
          last_end = std::max(last_end, e);
        }
      }
      if (edges.empty()) {
        continue;
      }
      const int k = slots(p);
      if (k == 1) {
        out = std::max(out, last_end);
        continue;
      }
      std::sort(edges.begin(), edges.end());  // at one time, ends (-1) before starts
      int busy = 0;
      int most = 0;
      for (const auto& [t, step] : edges) {
        busy += step;
        most = std::max(most, busy);
      }
      if (most >= k) {
        out = std::max(out, first_end);
      }
    }
    return out;
  }

  // When a transfer handed to `link` at `handed` starts on the wire: after its stall, which starts
  // once a stall slot is free (the transfer stall_slots before it has been sent), and once the wire is.
  static double wire_start(Link& link, double handed) {
    const double stall = link.stalls ? link.model->stall_s.rate_at(handed) : 0;
    if (stall <= 0) {
      return std::max(handed, link.free_s);
    }
    const std::size_t slots = static_cast<std::size_t>(std::max(1, link.model->stall_slots));
    const double slot_free = link.sent_s.size() >= slots ? link.sent_s[link.sent_s.size() - slots] : 0.0;
    const double from = std::max(handed, slot_free);
    return std::max(from + link.model->stall_s.rate_at(from), link.free_s);
  }

  void receive(int r, const Action& a, double arrival) {
    const bool fwd = a.op == Op::kRecvF;
    const double before = lane_[r];
    lane_[r] = std::max(lane_[r], arrival);
    stats_[r].wait_s += lane_[r] - before;
    (fwd ? recv_f_ : recv_b_)[at(a.stage, a.microbatch)] = lane_[r];
    if (c_.record_trace) {
      const int peer = rank_[fwd ? a.stage - 1 : a.stage + 1];
      record(r, Lane::kRecv, a, before, lane_[r], (fwd ? flow_f_ : flow_b_)[at(a.stage, a.microbatch)], peer);
    }
  }

  // Runs rank r until it blocks or ends.
  Result<void> advance(int r) {
    const auto& actions = s_.ranks[r];
    std::size_t& pc = pc_[r];
    for (; pc < actions.size(); ++pc) {
      const Action& a = actions[pc];
      const std::size_t i = at(a.stage, a.microbatch);
      switch (a.op) {
        case Op::kForward:
        case Op::kBackward:
        case Op::kBackwardInput:
        case Op::kBackwardWeight: {
          const double ready = input_ready(a);
          if (ready == kNotYet) {
            return {};
          }
          compute(r, a, ready);
          break;
        }
        case Op::kSendF:
        case Op::kSendB: {
          const double ready = (a.op == Op::kSendF ? f_end_ : b_end_)[i];
          if (ready == kNotYet) {
            return {};
          }
          if (auto ok = send(r, a, ready); !ok) {
            return ok;
          }
          break;
        }
        case Op::kRecvF:
        case Op::kRecvB: {
          const double arrival = (a.op == Op::kRecvF ? arrive_f_ : arrive_b_)[i];
          if (arrival == kNotYet) {
            return {};
          }
          receive(r, a, arrival);
          break;
        }
      }
    }
    return {};
  }

  Result<SimResult> finish() {
    std::string blocked;
    for (int r = 0; r < s_.num_ranks; ++r) {
      if (pc_[r] < s_.ranks[r].size()) {
        const Action& a = s_.ranks[r][pc_[r]];
        blocked += std::string(blocked.empty() ? "" : "; ") + "rank " + std::to_string(r) + " at action " +
                   std::to_string(pc_[r]) + " (" + schedule::to_string(a) + ")";
      }
    }
    if (!blocked.empty()) {
      return make_error(Errc::kDeadlock, s_.name + ": deadlock: no rank can proceed: " + blocked);
    }
    SimResult out;
    out.schedule = s_.name;
    out.num_ranks = s_.num_ranks;
    out.num_microbatches = m_;
    out.actions = s_.size();
    double busy = 0;
    for (int r = 0; r < s_.num_ranks; ++r) {
      stats_[r].finish_s = lane_[r] + costs(r).iteration_s;
      out.makespan_s = std::max(out.makespan_s, stats_[r].finish_s);
      busy += stats_[r].busy_s;
    }
    for (auto& st : stats_) {
      st.idle_s = std::max(0.0, out.makespan_s - st.busy_s - st.wait_s);
    }
    out.throughput_mb_per_s = out.makespan_s > 0 ? m_ / out.makespan_s : 0.0;
    out.bubble_fraction = out.makespan_s > 0 ? 1.0 - busy / (s_.num_ranks * out.makespan_s) : 0.0;
    out.ranks = std::move(stats_);
    out.port_wait_s = std::move(port_wait_);
    out.trace = std::move(trace_);
    return out;
  }

  const Schedule& s_;
  const SimConfig& c_;
  const int m_;
  const int last_;
  std::vector<int> rank_;  // per stage: its rank
  // Per (stage, micro-batch): when F/B ended, when the forward input / gradient receive
  // completed on the lane, when the transfer arrived (kNotYet until known).
  std::vector<double> f_end_, b_end_, recv_f_, recv_b_, arrive_f_, arrive_b_;
  std::vector<int> flow_f_, flow_b_;
  std::vector<std::size_t> pc_;
  std::vector<double> lane_;
  std::vector<int> held_;
  std::vector<std::uint64_t> held_bytes_;
  std::vector<RankStats> stats_;
  std::vector<Link> links_;
  std::map<int, std::vector<std::pair<double, double>>> port_busy_;  // by shared port: its transfers
  std::map<std::pair<int, int>, double> port_wait_;                  // SimResult::port_wait_s
  std::vector<int> fwd_link_, bwd_link_;
  std::vector<int> wake_;
  std::vector<TraceEvent> trace_;
  int next_flow_ = 0;
};

}  // namespace

SimConfig uniform_config(int num_stages, int chunks_per_rank, double forward_s, double backward_s,
                         std::uint64_t activation_bytes, LinkModel link) {
  CONTEND_CHECK(num_stages >= 1 && chunks_per_rank >= 1, "uniform_config needs stages and chunks >= 1");
  SimConfig c;
  const double v = chunks_per_rank;
  c.stages.assign(num_stages, StageCost{forward_s / v, backward_s / v, activation_bytes, activation_bytes,
                                        activation_bytes / static_cast<std::uint64_t>(chunks_per_rank), 0.5});
  c.default_link = std::move(link);
  return c;
}

namespace {

// A placement that names every stage's rank, each a rank of the schedule: what lowering and the
// simulation index by.
Result<void> check_placement(const schedule::Schedule& s) {
  if (s.placement.empty()) {
    return {};
  }
  if (static_cast<int>(s.placement.size()) != s.num_stages) {
    return make_error(Errc::kInvalidArgument, s.name + ": a placement of " + std::to_string(s.placement.size()) +
                                                  " stages, the schedule has " + std::to_string(s.num_stages));
  }
  for (int st = 0; st < s.num_stages; ++st) {
    if (s.placement[st] < 0 || s.placement[st] >= s.num_ranks) {
      return make_error(Errc::kInvalidArgument, s.name + ": stage " + std::to_string(st) + " placed on rank " +
                                                    std::to_string(s.placement[st]) + ", out of range");
    }
  }
  return {};
}

}  // namespace

Result<SimResult> simulate(const schedule::Schedule& schedule, const SimConfig& config) {
  if (auto ok = check_placement(schedule); !ok) {
    return ok.error();
  }
  if (!schedule.lowered()) {
    const Schedule lowered = schedule::lower(schedule);
    return Simulation(lowered, config).run();
  }
  return Simulation(schedule, config).run();
}

}  // namespace contend::sim
