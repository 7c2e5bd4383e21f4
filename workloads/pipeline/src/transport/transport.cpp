#include "contend/pipeline/transport/transport.h"

#include <atomic>
#include <thread>

#include "contend/common/units.h"

namespace contend::pipeline {

std::string describe(const Tag& tag) {
  if (tag.kind == Kind::kControl && tag.iteration == kBootstrapIteration) {
    return "the transport's bootstrap message " + std::to_string(tag.microbatch);
  }
  if (tag.iteration == kProbeIteration) {
    return "the probe of the links, tensor " + std::to_string(tag.microbatch);
  }
  if (tag.kind == Kind::kControl) {
    return std::string(tag.microbatch == 0 ? "the adaptive scheduler's measurements" : "the adaptive scheduler's k") +
           " (iteration " + std::to_string(tag.iteration) + ")";
  }
  return std::string(tag.kind == Kind::kActivation ? "activation" : "gradient") + " of micro-batch " +
         std::to_string(tag.microbatch) + " for stage " + std::to_string(tag.stage) + " (iteration " +
         std::to_string(tag.iteration) + ")";
}

SendOptions send_options_of(const Spec& transport) {
  SendOptions o;
  o.wait = transport.declares("sends") && transport.text("sends") == "wait";
  o.delegates = transport.declares("delegates") ? static_cast<int>(transport.integer("delegates")) : 1;
  const auto* kind = transports().find(transport);
  o.sent_when_delivered = kind != nullptr && kind->kind.sent_when_delivered;
  return o;
}

std::vector<ParamDef> send_params() {
  return {ParamDef::choice("sends",
                           "wait: a send returns once its tensor is with the kernel (Megatron's blocking sends); "
                           "async: at once, a thread per link sends (PipeMorph's CPU delegates)",
                           "async", {"async", "wait"}),
          ParamDef::integer("delegates",
                            "tensors to one peer that may wait out a stall at once (PipeMorph's delegates per "
                            "role); 1: one after another",
                            "1", 1, 64)};
}

// One line per built-in transport.
Registry<TransportKind>& transports() {
  static Registry<TransportKind> table(
      "transport", {{{"", "tcp", "TCP between the stages' addresses (host-staged for GPU tensors)", send_params()},
                     TransportKind{.make = [](const Spec&, std::unique_ptr<Transport> tcp, int, int,
                                              std::size_t) -> Result<std::unique_ptr<Transport>> { return tcp; }}}});
  return table;
}

TransferTotals Transport::take_transfers(int peer) {
  std::lock_guard<std::mutex> lock(transfers_mutex_);
  TransferTotals out;
  if (auto it = transfers_.find(peer); it != transfers_.end()) {
    out = it->second;
    transfers_.erase(it);
  }
  for (const Frame& f : recent_[peer]) {
    out.recent_bytes += f.tail_bytes;
    out.recent_seconds += f.tail_seconds;
    out.recent_burst_bytes = std::max(out.recent_burst_bytes, f.burst_bytes);
  }
  recent_.erase(peer);
  return out;
}

SendTotals Transport::take_sends(int peer) {
  std::lock_guard<std::mutex> lock(transfers_mutex_);
  SendTotals out;
  if (auto it = sends_.find(peer); it != sends_.end()) {
    out = it->second;
    sends_.erase(it);
  }
  return out;
}

void Transport::record_send(int peer, std::uint64_t bytes, double seconds) {
  std::lock_guard<std::mutex> lock(transfers_mutex_);
  SendTotals& t = sends_[peer];
  t.bytes += bytes;
  t.seconds += seconds;
  ++t.frames;
}

Result<void> Transport::set_send_options(SendOptions options) {
  if (options.stall_s || options.wait) {
    return make_error(Errc::kUnsupported, "this transport neither stalls nor waits for its sends");
  }
  return {};
}

void Transport::record_transfer(int peer, std::uint64_t bytes, double seconds, std::uint64_t tail_bytes,
                                double tail_seconds) {
  if (bytes < kMinTimedBytes || tail_seconds <= 0) {
    return;
  }
  const double sustained = static_cast<double>(tail_bytes) / tail_seconds;  // bytes per second
  std::lock_guard<std::mutex> lock(transfers_mutex_);
  TransferTotals& t = transfers_[peer];
  t.bytes += bytes;
  t.seconds += seconds;
  ++t.frames;
  t.tail_bytes += tail_bytes;
  t.tail_seconds += tail_seconds;
  const double burst = std::max(0.0, static_cast<double>(bytes) - sustained * seconds);
  t.burst_bytes = std::max(t.burst_bytes, burst);
  auto& recent = recent_[peer];
  if (recent.size() == kRecentFrames) {
    recent.erase(recent.begin());
  }
  recent.push_back({tail_bytes, tail_seconds, burst});
}

std::vector<float> BufferPool::take(std::size_t floats) {
  std::vector<float> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = free_.size(); i-- > 0;) {
      if (free_[i].capacity() >= floats) {
        out = std::move(free_[i]);
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  out.resize(floats);
  return out;
}

void BufferPool::give(std::vector<float> buffer) {
  if (buffer.capacity() == 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.size() < 256) {
    free_.push_back(std::move(buffer));
  }
}

void Mailbox::put(int peer, Tag tag, std::vector<float> data) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    messages_[{peer, tag}] = std::move(data);
  }
  cv_.notify_all();
}

void Mailbox::fail(int peer, Error error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    broken_.emplace(peer, std::move(error));
  }
  cv_.notify_all();
}

Result<std::vector<float>> Mailbox::take(int peer, Tag tag, Deadline deadline, const std::string& peer_name) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto key = std::pair{peer, tag};
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    auto it = messages_.find(key);
    if (it != messages_.end()) {
      std::vector<float> out = std::move(it->second);
      messages_.erase(it);
      return out;
    }
    if (auto b = broken_.find(peer); b != broken_.end()) {
      return make_error(b->second.code,
                        "waiting for " + describe(tag) + " from " + peer_name + ": " + b->second.message);
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !messages_.count(key) && !broken_.count(peer)) {
      return make_error(
          Errc::kTimeout,
          "timed out after " +
              format_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) +
              " waiting for " + describe(tag) + " from " + peer_name);
    }
  }
}

class InProcTransport : public Transport {
 public:
  InProcTransport(InProcHub& hub, int rank) : hub_(hub), rank_(rank) {}
  // In one process a send is delivered at once: a stall is waited on the caller's thread, as a
  // waiting send would (tests of the stall and wait options use the TCP transport's threads).
  Result<void> send(int peer, Tag tag, std::vector<float> data, Completion complete = {}) override {
    if (complete) {
      complete(data);
    }
    if (options_.stall_s) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.stall_s(peer, tag)));
    }
    bytes_ += data.size() * sizeof(float);
    hub_.boxes_[peer]->put(rank_, tag, std::move(data));
    return {};
  }
  Result<void> set_send_options(SendOptions options) override {
    options_ = std::move(options);
    return {};
  }
  Result<std::vector<float>> recv(int peer, Tag tag, Deadline deadline) override {
    return hub_.boxes_[rank_]->take(peer, tag, deadline, "rank " + std::to_string(peer));
  }
  Result<void> flush() override { return {}; }
  std::uint64_t bytes_sent() const override { return bytes_; }
  void abort(const std::string& why) override {
    hub_.fail_rank(rank_, "rank " + std::to_string(rank_) + " failed: " + why);
  }

 private:
  InProcHub& hub_;
  int rank_;
  std::atomic<std::uint64_t> bytes_{0};
  SendOptions options_;
};

InProcHub::InProcHub(int ranks) {
  for (int r = 0; r < ranks; ++r) {
    boxes_.push_back(std::make_unique<Mailbox>());
  }
}

std::unique_ptr<Transport> InProcHub::transport(int rank) {
  return std::make_unique<InProcTransport>(*this, rank);
}

void InProcHub::fail_rank(int rank, const std::string& why) {
  for (int r = 0; r < static_cast<int>(boxes_.size()); ++r) {
    if (r != rank) {
      boxes_[r]->fail(rank, make_error(Errc::kIo, why));
    }
  }
}

}  // namespace contend::pipeline
