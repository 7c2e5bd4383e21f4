#include "contend/pipeline/policy/coordinator.h"

#include "contend/schedule/registry.h"

#include <cstring>

namespace contend::pipeline {
namespace {

constexpr int kReports = 0;                // Tag::microbatch of the report list
constexpr int kDecision = 1;               // ... and of the decision
constexpr std::size_t kTotalsDoubles = 9;  // a TransferTotals
constexpr std::size_t kSendDoubles = 3;    // a SendTotals
constexpr std::size_t kStageDoubles = 7;   // a StageReport's own fields
constexpr std::size_t kReportDoubles = kStageDoubles + 2 * kTotalsDoubles + 2 * kSendDoubles;

void append(std::vector<double>& out, const TransferTotals& t) {
  for (double v :
       {static_cast<double>(t.bytes), t.seconds, static_cast<double>(t.frames), static_cast<double>(t.tail_bytes),
        t.tail_seconds, t.burst_bytes, static_cast<double>(t.recent_bytes), t.recent_seconds, t.recent_burst_bytes}) {
    out.push_back(v);
  }
}

void append(std::vector<double>& out, const SendTotals& t) {
  for (double v : {static_cast<double>(t.bytes), t.seconds, static_cast<double>(t.frames)}) {
    out.push_back(v);
  }
}

void append(std::vector<double>& out, const StageReport& r) {
  for (double v : {r.forward_s, r.backward_s, r.send_s, r.iteration_cost_s, static_cast<double>(r.message_bytes),
                   static_cast<double>(r.stash_bytes), r.iteration_s}) {
    out.push_back(v);
  }
  append(out, r.from_prev);
  append(out, r.from_next);
  append(out, r.to_prev);
  append(out, r.to_next);
}

TransferTotals totals_at(const double* p) {
  return {static_cast<std::uint64_t>(p[0]), p[1], static_cast<int>(p[2]),
          static_cast<std::uint64_t>(p[3]), p[4], p[5],
          static_cast<std::uint64_t>(p[6]), p[7], p[8]};
}

SendTotals sends_at(const double* p) {
  return {static_cast<std::uint64_t>(p[0]), p[1], static_cast<int>(p[2])};
}

StageReport report_at(const std::vector<double>& v, std::size_t i) {
  const double* p = v.data() + i * kReportDoubles;
  StageReport r;
  r.forward_s = p[0];
  r.backward_s = p[1];
  r.send_s = p[2];
  r.iteration_cost_s = p[3];
  r.message_bytes = static_cast<std::uint64_t>(p[4]);
  r.stash_bytes = static_cast<std::uint64_t>(p[5]);
  r.iteration_s = p[6];
  r.from_prev = totals_at(p + kStageDoubles);
  r.from_next = totals_at(p + kStageDoubles + kTotalsDoubles);
  r.to_prev = sends_at(p + kStageDoubles + 2 * kTotalsDoubles);
  r.to_next = sends_at(p + kStageDoubles + 2 * kTotalsDoubles + kSendDoubles);
  return r;
}

}  // namespace

std::vector<float> pack_doubles(const std::vector<double>& values) {
  std::vector<float> out(values.size() * 2);
  std::memcpy(out.data(), values.data(), values.size() * sizeof(double));
  return out;
}

std::vector<double> unpack_doubles(const std::vector<float>& data) {
  std::vector<double> out(data.size() / 2);
  std::memcpy(out.data(), data.data(), out.size() * sizeof(double));
  return out;
}

namespace {

// A decision on the wire: its k, then the characters of its schedule's canonical spec.
std::vector<double> pack_decision(const Decision& d) {
  std::vector<double> out = {static_cast<double>(d.k)};
  for (char c : d.schedule.str()) {
    out.push_back(static_cast<unsigned char>(c));
  }
  return out;
}

Result<Decision> unpack_decision(const std::vector<double>& v, int iteration) {
  if (v.empty()) {
    return make_error(Errc::kParse, "empty");
  }
  std::string text;
  for (std::size_t i = 1; i < v.size(); ++i) {
    text += static_cast<char>(static_cast<unsigned char>(v[i]));
  }
  auto spec = schedule::parse_schedule(text);
  if (!spec) {
    return spec.error();
  }
  Decision d;
  d.iteration = iteration;
  d.k = static_cast<int>(v[0]);
  d.schedule = std::move(*spec);
  return d;
}

}  // namespace

Coordinator::Coordinator(int rank, int world_size, Transport& transport, std::unique_ptr<KPolicy> policy,
                         std::chrono::milliseconds timeout, std::uint64_t probe_bytes)
    : rank_(rank),
      world_size_(world_size),
      transport_(transport),
      policy_(std::move(policy)),
      timeout_(timeout),
      probe_bytes_(probe_bytes) {
  CONTEND_CHECK((rank == 0) == (policy_ != nullptr), "the policy lives at rank 0, and only there");
}

Result<std::vector<StageReport>> Coordinator::gather(int iteration, const StageReport& mine) {
  std::vector<double> list;
  append(list, mine);
  if (rank_ + 1 < world_size_) {
    auto got = transport_.recv(rank_ + 1, Tag{Kind::kControl, iteration, kReports, 0},
                               std::chrono::steady_clock::now() + timeout_);
    if (!got) {
      return got.error();
    }
    const std::vector<double> later = unpack_doubles(*got);
    if (later.size() != kReportDoubles * static_cast<std::size_t>(world_size_ - rank_ - 1)) {
      return make_error(Errc::kIo, "rank " + std::to_string(rank_ + 1) + " sent a report list of the wrong size");
    }
    list.insert(list.end(), later.begin(), later.end());
  }
  if (rank_ > 0) {
    if (auto ok = transport_.send(rank_ - 1, Tag{Kind::kControl, iteration, kReports, 0}, pack_doubles(list)); !ok) {
      return ok.error();
    }
    return std::vector<StageReport>{};
  }
  std::vector<StageReport> reports;
  for (std::size_t i = 0; i < static_cast<std::size_t>(world_size_); ++i) {
    reports.push_back(report_at(list, i));
  }
  return reports;
}

Result<StageReport> Coordinator::probe() {
  std::vector<int> peers;
  for (const int peer : {rank_ - 1, rank_ + 1}) {
    if (peer >= 0 && peer < world_size_) {
      peers.push_back(peer);
    }
  }
  // Activations forward, gradients back, as the pipeline's own: the receiver times those.
  const auto tag = [&](int peer, bool mine, int i) {
    const bool forward = mine ? peer > rank_ : peer < rank_;
    return Tag{forward ? Kind::kActivation : Kind::kGradient, kProbeIteration, i, 0};
  };
  const std::size_t floats = (probe_bytes_ + sizeof(float) - 1) / sizeof(float);
  for (const int peer : peers) {
    for (int i = 0; i < kProbeFrames; ++i) {
      std::vector<float> data = transport_.buffer(floats);
      data.resize(floats);
      if (auto ok = transport_.send(peer, tag(peer, true, i), std::move(data)); !ok) {
        return ok.error();
      }
    }
  }
  for (const int peer : peers) {
    for (int i = 0; i < kProbeFrames; ++i) {
      auto got = transport_.recv(peer, tag(peer, false, i), std::chrono::steady_clock::now() + timeout_);
      if (!got) {
        return got.error();
      }
      transport_.recycle(std::move(*got));
    }
  }
  StageReport r;  // the links only: no compute has run
  r.from_prev = transport_.take_transfers(rank_ - 1);
  r.from_next = transport_.take_transfers(rank_ + 1);
  return r;
}

Result<Decision> Coordinator::agree(int iteration, const std::optional<StageReport>& mine) {
  std::vector<StageReport> reports;
  std::optional<StageReport> report = mine;
  if (!report && iteration == 0 && probe_bytes_ > 0) {
    auto probed = probe();
    if (!probed) {
      return probed.error();
    }
    report = std::move(*probed);
  }
  if (report) {
    auto got = gather(iteration, *report);
    if (!got) {
      return got.error();
    }
    reports = std::move(*got);
  }
  Decision d;
  if (rank_ == 0) {
    auto decided = policy_->decide(iteration, reports);
    if (!decided) {
      return decided.error();
    }
    d = std::move(*decided);
  } else {
    auto got = transport_.recv(rank_ - 1, Tag{Kind::kControl, iteration, kDecision, 0},
                               std::chrono::steady_clock::now() + timeout_);
    if (!got) {
      return got.error();
    }
    auto decided = unpack_decision(unpack_doubles(*got), iteration);
    if (!decided) {
      return make_error(Errc::kIo,
                        "rank " + std::to_string(rank_ - 1) + " sent a malformed decision: " + decided.error().message);
    }
    d = std::move(*decided);
  }
  if (rank_ + 1 < world_size_) {
    auto ok = transport_.send(rank_ + 1, Tag{Kind::kControl, iteration, kDecision, 0}, pack_doubles(pack_decision(d)));
    if (!ok) {
      return ok.error();
    }
  }
  return d;
}

}  // namespace contend::pipeline
