#pragma once
// Private: the nccl transport of one rank (nccl_transport.h says how it works): a sending and a
// receiving NcclChannel per chain neighbour, each driven by its own thread, the send queues those
// threads take from, and the mailbox the receivers fill. Declared here, not in an anonymous
// namespace, because connect_nccl (nccl_transport.cpp) makes it and nccl_transport_impl.cpp
// defines it. Thread-safe as Transport.

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/result.h"
#include "contend/pipeline/transport/transport.h"
#include "nccl_channel.h"

namespace contend::pipeline_cuda::detail {

class NcclTransport : public pipeline::Transport {
 public:
  NcclTransport(std::unique_ptr<pipeline::Transport> bootstrap, int device, std::size_t message_floats)
      : bootstrap_(std::move(bootstrap)), device_(device), capacity_(message_floats) {}

  ~NcclTransport() override { shutdown(); }

  // Every channel's buffers and communicators, then their threads (nccl_transport_impl.cpp).
  Result<void> start(const std::map<int, ncclUniqueId>& send_ids, const std::map<int, ncclUniqueId>& recv_ids);

  // Control messages, and tensors for a rank that is not a chain neighbour (a looped schedule's
  // last rank and first), go over the TCP bootstrap: the NCCL channels join r-1 and r+1 only.
  bool over_bootstrap(int peer, const pipeline::Tag& tag) const {
    return tag.kind == pipeline::Kind::kControl || queues_.count(peer) == 0;
  }

  Result<void> send(int peer, pipeline::Tag tag, std::vector<float> data, pipeline::Completion complete = {}) override;
  Result<std::vector<float>> recv(int peer, pipeline::Tag tag, pipeline::Deadline deadline) override;
  Result<void> flush() override;
  std::uint64_t bytes_sent() const override;
  // Stalls wait on the channel's sending thread before each ncclSend, as PipeMorph's injector
  // spins on the send's stream; waiting sends return once their tensor's ncclSend completed.
  Result<void> set_send_options(pipeline::SendOptions options) override;

 private:
  struct Item {
    pipeline::Tag tag;
    std::vector<float> data;
    pipeline::Completion complete;
    std::chrono::steady_clock::time_point queued;
  };

  Error too_large(std::size_t n) const;
  void fail_channel(NcclChannel& ch, const Error& e);
  void send_loop(NcclChannel& ch);
  Result<void> send_one(NcclChannel& ch, pipeline::Tag tag, const std::vector<float>& data);
  void recv_loop(NcclChannel& ch);
  Result<void> recv_into(NcclChannel& ch, float* dst, std::size_t n, const std::string& what);
  Result<bool> recv_one(NcclChannel& ch);
  void shutdown();

  std::unique_ptr<pipeline::Transport> bootstrap_;
  int device_;
  std::size_t capacity_;  // floats: every channel's buffers, allocated at start
  std::vector<std::unique_ptr<NcclChannel>> channels_;
  pipeline::Mailbox box_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<int, std::deque<Item>> queues_;
  pipeline::SendOptions options_;        // set before the first send
  std::map<int, std::uint64_t> queued_;  // per peer: tensors ever queued...
  std::map<int, std::uint64_t> sent_;    // ...and ever sent (or failed)
  std::map<int, Error> send_errors_;
  int busy_ = 0;
  bool closing_ = false;
  std::atomic<bool> stop_{false};
  std::uint64_t bytes_ = 0;
};

}  // namespace contend::pipeline_cuda::detail
