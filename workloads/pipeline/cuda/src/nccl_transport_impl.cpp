// The nccl transport's class: its channels' threads, the send queues and the mailbox (the
// connection is made in nccl_transport.cpp, the bootstrap in nccl_bootstrap.cpp).
#include "nccl_transport_impl.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "contend/pipeline/transport/stall_clock.h"
#include "cuda_check.h"

namespace contend::pipeline_cuda::detail {
namespace {

using pipeline::Deadline;
using pipeline::Kind;
using pipeline::Tag;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kCloseKind = 255;  // the last header a sender sends
constexpr auto kCloseTimeout = std::chrono::seconds(10);
// After kCloseTimeout, how long a channel's thread may take to return from a call already inside
// NCCL before its communicator is aborted under it (a status query returns in microseconds).
constexpr auto kAbortGrace = std::chrono::milliseconds(200);

double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

}  // namespace

// Allocates every channel's buffers, then creates both channels of every neighbour in one NCCL
// group: this rank is 0 of the communicators it sends on (`send_ids`) and 1 of those it
// receives on (`recv_ids`). Nothing is allocated after this.
Result<void> NcclTransport::start(const std::map<int, ncclUniqueId>& send_ids,
                                  const std::map<int, ncclUniqueId>& recv_ids) {
  for (const auto& [peer, id] : send_ids) {
    queues_[peer];  // the chain neighbours (the key set never changes): others go over the bootstrap
    for (bool sends : {true, false}) {
      auto c = std::make_unique<NcclChannel>(peer, sends, device_);
      if (auto ok = c->allocate(capacity_); !ok) {
        return ok;
      }
      channels_.push_back(std::move(c));
    }
  }
  NCCL_TRY(ncclGroupStart());
  for (auto& c : channels_) {
    const ncclUniqueId& id = c->sends() ? send_ids.at(c->peer()) : recv_ids.at(c->peer());
    if (ncclResult_t r = c->init_comm(id, c->sends() ? 0 : 1); r != ncclSuccess) {
      ncclGroupEnd();
      return nccl_error(r, "ncclCommInitRank with rank " + std::to_string(c->peer()));
    }
  }
  NCCL_TRY(ncclGroupEnd());
  for (auto& c : channels_) {
    NcclChannel* ch = c.get();
    ch->start([this, ch] {
      // The current device is per thread: this one's NCCL calls, copies and stream queries.
      if (auto e = cudaSetDevice(device_); e != cudaSuccess) {
        fail_channel(*ch, cuda_error(e, "cudaSetDevice(" + std::to_string(device_) + ") on an nccl thread"));
      } else if (ch->sends()) {
        send_loop(*ch);
      } else {
        recv_loop(*ch);
      }
      ch->set_done();
    });
  }
  return {};
}

Result<void> NcclTransport::send(int peer, Tag tag, std::vector<float> data, pipeline::Completion complete) {
  if (over_bootstrap(peer, tag)) {
    return bootstrap_->send(peer, tag, std::move(data), std::move(complete));
  }
  // The tensor's size is known only once `complete` has run, on the sending thread; a tensor
  // without one is checked here, where the caller hears it at once.
  if (!complete && data.size() > capacity_) {
    return too_large(data.size());
  }
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = send_errors_.find(peer);
  if (it != send_errors_.end()) {
    return it->second;
  }
  bytes_ += data.size() * sizeof(float);
  queues_[peer].push_back({tag, std::move(data), std::move(complete), std::chrono::steady_clock::now()});
  const std::uint64_t ticket = ++queued_[peer];
  cv_.notify_all();
  if (options_.wait) {
    cv_.wait(lock, [&] { return sent_[peer] >= ticket || send_errors_.count(peer) != 0; });
    const auto error = send_errors_.find(peer);
    return error == send_errors_.end() ? Result<void>() : Result<void>(error->second);
  }
  return {};
}

Result<void> NcclTransport::set_send_options(pipeline::SendOptions options) {
  if (auto ok = bootstrap_->set_send_options(options); !ok) {
    return ok;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  options_ = std::move(options);
  return {};
}

Result<std::vector<float>> NcclTransport::recv(int peer, Tag tag, Deadline deadline) {
  if (over_bootstrap(peer, tag)) {
    return bootstrap_->recv(peer, tag, deadline);
  }
  return box_.take(peer, tag, deadline, "rank " + std::to_string(peer) + " (nccl)");
}

Result<void> NcclTransport::flush() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] {
      for (const auto& [peer, q] : queues_) {
        if (!q.empty() && send_errors_.count(peer) == 0) {
          return false;
        }
      }
      return busy_ == 0;
    });
    if (!send_errors_.empty()) {
      return send_errors_.begin()->second;
    }
  }
  return bootstrap_->flush();
}

std::uint64_t NcclTransport::bytes_sent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_ + bootstrap_->bytes_sent();
}

Error NcclTransport::too_large(std::size_t n) const {
  return make_error(Errc::kInvalidArgument, "nccl: a tensor of " + std::to_string(n) + " floats is larger than the " +
                                                std::to_string(capacity_) +
                                                " floats the transport allocated for at start");
}

void NcclTransport::fail_channel(NcclChannel& ch, const Error& e) {
  if (ch.sends()) {
    std::lock_guard<std::mutex> lock(mutex_);
    send_errors_.emplace(ch.peer(), with_context(e, "sending to rank " + std::to_string(ch.peer())));
    cv_.notify_all();
  } else {
    box_.fail(ch.peer(), with_context(e, "receiving from rank " + std::to_string(ch.peer()) + " (nccl)"));
  }
}

void NcclTransport::send_loop(NcclChannel& ch) {
  std::optional<pipeline::StallClock> stalls;  // made with the first item: options_ are set by then
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return closing_ || !queues_[ch.peer()].empty(); });
      if (queues_[ch.peer()].empty()) {
        break;  // closing, everything sent
      }
      item = std::move(queues_[ch.peer()].front());
      queues_[ch.peer()].pop_front();
      ++busy_;
      if (!stalls) {
        stalls.emplace(options_.delegates);
      }
    }
    const auto taken = options_.stall_s ? stalls->start(item.queued) : std::chrono::steady_clock::now();
    if (item.complete) {
      item.complete(item.data);
      item.complete = nullptr;  // releases what the backend held for it
    }
    if (options_.stall_s) {
      pipeline::StallClock::wait(taken, options_.stall_s(ch.peer(), item.tag));
    }
    const std::uint64_t bytes = item.data.size() * sizeof(float);
    auto ok =
        item.data.size() > capacity_ ? Result<void>(too_large(item.data.size())) : send_one(ch, item.tag, item.data);
    stalls->sent(std::chrono::steady_clock::now());
    if (ok && bytes >= pipeline::kMinTimedBytes) {
      record_send(ch.peer(), bytes, std::chrono::duration<double>(std::chrono::steady_clock::now() - taken).count());
    }
    recycle(std::move(item.data));
    std::lock_guard<std::mutex> lock(mutex_);
    --busy_;
    ++sent_[ch.peer()];
    if (!ok) {
      send_errors_.emplace(ch.peer(), with_context(ok.error(), "sending to rank " + std::to_string(ch.peer())));
    }
    cv_.notify_all();
    if (!ok) {
      return;
    }
  }
  // The peer's receiver stops at this header.
  ch.host_header()[0] = kCloseKind;
  if (!stop_.load() &&
      cudaMemcpyAsync(ch.dev_header(), ch.host_header(), kHeaderWords * sizeof(std::int64_t), cudaMemcpyHostToDevice,
                      ch.stream()) == cudaSuccess &&
      ch.call("the closing header",
              [&](ncclComm_t c) { return ncclSend(ch.dev_header(), kHeaderWords, ncclInt64, 1, c, ch.stream()); })) {
    (void)ch.wait(stop_, "the closing header");
  }
}

// A header, then the payload in two halves (the receiver times the second apart).
Result<void> NcclTransport::send_one(NcclChannel& ch, Tag tag, const std::vector<float>& data) {
  const std::size_t n = data.size();
  ch.host_header()[0] = static_cast<std::int64_t>(tag.kind);
  ch.host_header()[1] = tag.iteration;
  ch.host_header()[2] = tag.microbatch;
  ch.host_header()[3] = static_cast<std::int64_t>(n);
  ch.host_header()[4] = tag.stage;
  std::memcpy(ch.host(), data.data(), n * sizeof(float));
  CUDA_TRY(cudaMemcpyAsync(ch.dev_header(), ch.host_header(), kHeaderWords * sizeof(std::int64_t),
                           cudaMemcpyHostToDevice, ch.stream()));
  CUDA_TRY(cudaMemcpyAsync(ch.dev(), ch.host(), n * sizeof(float), cudaMemcpyHostToDevice, ch.stream()));
  const std::size_t first = n - n / 2;
  auto ok = ch.call("ncclSend of " + pipeline::describe(tag), [&](ncclComm_t c) {
    ncclResult_t r = ncclSend(ch.dev_header(), kHeaderWords, ncclInt64, 1, c, ch.stream());
    if (r == ncclSuccess && first > 0) {
      r = ncclSend(ch.dev(), first, ncclFloat, 1, c, ch.stream());
    }
    if (r == ncclSuccess && n / 2 > 0) {
      r = ncclSend(ch.dev() + first, n / 2, ncclFloat, 1, c, ch.stream());
    }
    return r;
  });
  if (!ok) {
    return ok;
  }
  // The pinned buffers are reused by the next message only once this one has left.
  return ch.wait(stop_, "ncclSend of " + pipeline::describe(tag));
}

void NcclTransport::recv_loop(NcclChannel& ch) {
  const std::string name = "rank " + std::to_string(ch.peer()) + " (nccl)";
  for (;;) {
    auto ok = recv_one(ch);
    if (!ok) {
      box_.fail(ch.peer(), with_context(ok.error(), "receiving from " + name));
      return;
    }
    if (!*ok) {
      box_.fail(ch.peer(), make_error(Errc::kIo, name + " finished and closed the connection"));
      return;
    }
  }
}

Result<void> NcclTransport::recv_into(NcclChannel& ch, float* dst, std::size_t n, const std::string& what) {
  if (auto ok = ch.call(what, [&](ncclComm_t c) { return ncclRecv(dst, n, ncclFloat, 0, c, ch.stream()); }); !ok) {
    return ok;
  }
  return ch.wait(stop_, what);
}

// One message into the mailbox; false at the closing header.
Result<bool> NcclTransport::recv_one(NcclChannel& ch) {
  auto posted = ch.call("ncclRecv of a header", [&](ncclComm_t c) {
    return ncclRecv(ch.dev_header(), kHeaderWords, ncclInt64, 0, c, ch.stream());
  });
  if (!posted) {
    return posted.error();
  }
  CUDA_TRY(cudaMemcpyAsync(ch.host_header(), ch.dev_header(), kHeaderWords * sizeof(std::int64_t),
                           cudaMemcpyDeviceToHost, ch.stream()));
  if (auto ok = ch.wait(stop_, "ncclRecv of a header"); !ok) {
    return ok.error();
  }
  const double t0 = now_s();
  if (ch.host_header()[0] == kCloseKind) {
    return false;
  }
  const Tag tag{static_cast<Kind>(ch.host_header()[0]), static_cast<int>(ch.host_header()[1]),
                static_cast<int>(ch.host_header()[2]), static_cast<int>(ch.host_header()[4])};
  if (ch.host_header()[3] < 0 || static_cast<std::size_t>(ch.host_header()[3]) > capacity_) {
    return make_error(Errc::kIo, "rank " + std::to_string(ch.peer()) + " announced " + pipeline::describe(tag) +
                                     " of " + std::to_string(ch.host_header()[3]) + " floats; this rank allocated " +
                                     std::to_string(capacity_) + ": do both run the same model?");
  }
  const std::size_t n = static_cast<std::size_t>(ch.host_header()[3]);
  const std::size_t first = n - n / 2;
  const std::string what = "ncclRecv of " + pipeline::describe(tag);
  double t_half = t0;
  if (first > 0) {
    if (auto ok = recv_into(ch, ch.dev(), first, what); !ok) {
      return ok.error();
    }
    t_half = now_s();
  }
  if (n / 2 > 0) {
    if (auto ok = recv_into(ch, ch.dev() + first, n / 2, what); !ok) {
      return ok.error();
    }
  }
  const double t_end = now_s();
  CUDA_TRY(cudaMemcpyAsync(ch.host(), ch.dev(), n * sizeof(float), cudaMemcpyDeviceToHost, ch.stream()));
  if (auto ok = ch.wait(stop_, "copying " + pipeline::describe(tag) + " to the host"); !ok) {
    return ok.error();
  }
  std::vector<float> v = buffer(n);
  std::memcpy(v.data(), ch.host(), n * sizeof(float));
  box_.put(ch.peer(), tag, std::move(v));
  record_transfer(ch.peer(), n * sizeof(float), t_end - t0, (n / 2) * sizeof(float), t_end - t_half);
  return true;
}

// Senders send what is queued and their closing header, receivers wait for the peers'. After
// kCloseTimeout (a peer gone) the threads are stopped and the communicators aborted BEFORE the
// threads are joined: a thread blocked inside NCCL on a dead peer returns only once its
// communicator is aborted, so joining first would wait forever.
void NcclTransport::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  cv_.notify_all();
  const auto deadline = Clock::now() + kCloseTimeout;
  for (auto& c : channels_) {
    while (c->started() && !c->done() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  stop_ = true;  // threads polling their streams return at their next look
  for (auto& c : channels_) {
    c->abort(kAbortGrace);
  }
  for (auto& c : channels_) {
    c->join();
  }
  channels_.clear();  // frees the buffers
}

}  // namespace contend::pipeline_cuda::detail
