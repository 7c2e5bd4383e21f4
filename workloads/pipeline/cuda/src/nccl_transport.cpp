#include "contend/pipeline_cuda/nccl_transport.h"

#include "contend/pipeline_cuda/entries.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "nccl_channel.h"

namespace contend::pipeline_cuda {
namespace {

using pipeline::Deadline;
using pipeline::Kind;
using pipeline::Tag;
using pipeline::Transport;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kCloseKind = 255;  // the last header a sender sends
constexpr std::size_t kUuidBytes = 16;
constexpr std::size_t kHostIdBytes = 8;
// The bootstrap message: GPU UUID, hash of NCCL_HOSTID, the unique id.
constexpr std::size_t kBootstrapBytes = kUuidBytes + kHostIdBytes + sizeof(ncclUniqueId);
constexpr std::size_t kBootstrapFloats = (kBootstrapBytes + sizeof(float) - 1) / sizeof(float);
constexpr auto kBootstrapTimeout = std::chrono::seconds(60);
constexpr auto kCloseTimeout = std::chrono::seconds(10);
// After kCloseTimeout, how long a channel's thread may take to return from a call already inside
// NCCL before its communicator is aborted under it (a status query returns in microseconds).
constexpr auto kAbortGrace = std::chrono::milliseconds(200);

double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

#define NCCL_TRY(expr)                                 \
  do {                                                 \
    if (ncclResult_t r_ = (expr); r_ != ncclSuccess) { \
      return nccl_error(r_, #expr);                    \
    }                                                  \
  } while (0)

// FNV-1a of NCCL_HOSTID ("" when unset): NCCL tells hosts apart by it, and refuses two ranks on
// one GPU only within one host.
std::uint64_t host_id_hash() {
  const char* id = std::getenv("NCCL_HOSTID");
  std::uint64_t h = 1469598103934665603ull;
  for (const char* c = id != nullptr ? id : ""; *c != '\0'; ++c) {
    h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  }
  return h;
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

class NcclTransport : public Transport {
 public:
  NcclTransport(std::unique_ptr<Transport> bootstrap, int device, std::size_t message_floats)
      : bootstrap_(std::move(bootstrap)), device_(device), capacity_(message_floats) {}

  ~NcclTransport() override { shutdown(); }

  // Allocates every channel's buffers, then creates both channels of every neighbour in one NCCL
  // group: this rank is 0 of the communicators it sends on (`send_ids`) and 1 of those it
  // receives on (`recv_ids`). Nothing is allocated after this.
  Result<void> start(const std::map<int, ncclUniqueId>& send_ids, const std::map<int, ncclUniqueId>& recv_ids) {
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

  // Control messages, and tensors for a rank that is not a chain neighbour (a looped schedule's
  // last rank and first), go over the TCP bootstrap: the NCCL channels join r-1 and r+1 only.
  bool over_bootstrap(int peer, const Tag& tag) const { return tag.kind == Kind::kControl || queues_.count(peer) == 0; }

  Result<void> send(int peer, Tag tag, std::vector<float> data, pipeline::Completion complete = {}) override {
    if (over_bootstrap(peer, tag)) {
      return bootstrap_->send(peer, tag, std::move(data), std::move(complete));
    }
    // The tensor's size is known only once `complete` has run, on the sending thread; a tensor
    // without one is checked here, where the caller hears it at once.
    if (!complete && data.size() > capacity_) {
      return too_large(data.size());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = send_errors_.find(peer);
    if (it != send_errors_.end()) {
      return it->second;
    }
    bytes_ += data.size() * sizeof(float);
    queues_[peer].push_back({tag, std::move(data), std::move(complete)});
    cv_.notify_all();
    return {};
  }

  Result<std::vector<float>> recv(int peer, Tag tag, Deadline deadline) override {
    if (over_bootstrap(peer, tag)) {
      return bootstrap_->recv(peer, tag, deadline);
    }
    return box_.take(peer, tag, deadline, "rank " + std::to_string(peer) + " (nccl)");
  }

  Result<void> flush() override {
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

  std::uint64_t bytes_sent() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_ + bootstrap_->bytes_sent();
  }

 private:
  struct Item {
    Tag tag;
    std::vector<float> data;
    pipeline::Completion complete;
  };

  Error too_large(std::size_t n) const {
    return make_error(Errc::kInvalidArgument, "nccl: a tensor of " + std::to_string(n) + " floats is larger than the " +
                                                  std::to_string(capacity_) +
                                                  " floats the transport allocated for at start");
  }

  void fail_channel(NcclChannel& ch, const Error& e) {
    if (ch.sends()) {
      std::lock_guard<std::mutex> lock(mutex_);
      send_errors_.emplace(ch.peer(), with_context(e, "sending to rank " + std::to_string(ch.peer())));
      cv_.notify_all();
    } else {
      box_.fail(ch.peer(), with_context(e, "receiving from rank " + std::to_string(ch.peer()) + " (nccl)"));
    }
  }

  void send_loop(NcclChannel& ch) {
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
      }
      if (item.complete) {
        item.complete(item.data);
        item.complete = nullptr;  // releases what the backend held for it
      }
      auto ok =
          item.data.size() > capacity_ ? Result<void>(too_large(item.data.size())) : send_one(ch, item.tag, item.data);
      recycle(std::move(item.data));
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
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
  Result<void> send_one(NcclChannel& ch, Tag tag, const std::vector<float>& data) {
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

  void recv_loop(NcclChannel& ch) {
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

  Result<void> recv_into(NcclChannel& ch, float* dst, std::size_t n, const std::string& what) {
    if (auto ok = ch.call(what, [&](ncclComm_t c) { return ncclRecv(dst, n, ncclFloat, 0, c, ch.stream()); }); !ok) {
      return ok;
    }
    return ch.wait(stop_, what);
  }

  // One message into the mailbox; false at the closing header.
  Result<bool> recv_one(NcclChannel& ch) {
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
  void shutdown() {
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

  std::unique_ptr<Transport> bootstrap_;
  int device_;
  std::size_t capacity_;  // floats: every channel's buffers, allocated at start
  std::vector<std::unique_ptr<NcclChannel>> channels_;
  pipeline::Mailbox box_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<int, std::deque<Item>> queues_;
  std::map<int, Error> send_errors_;
  int busy_ = 0;
  bool closing_ = false;
  std::atomic<bool> stop_{false};
  std::uint64_t bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<Transport>> connect_nccl(std::unique_ptr<Transport> bootstrap, int rank, int world_size,
                                                std::size_t message_floats, int device) {
  if (message_floats == 0) {
    return make_error(Errc::kInvalidArgument, "the nccl transport needs the size of the tensors it will carry");
  }
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    return make_error(Errc::kUnsupported, std::string("the nccl transport needs a CUDA device: ") +
                                              (e != cudaSuccess ? cudaGetErrorString(e) : "none visible"));
  }
  const int dev = device >= 0 ? device : rank % count;
  CUDA_TRY(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  unsigned char uuid[kUuidBytes];
  std::memcpy(uuid, prop.uuid.bytes, kUuidBytes);

  // Bootstrap: to each neighbour, this GPU's UUID and the id of the communicator this rank sends on.
  const std::uint64_t host_id = host_id_hash();
  std::map<int, ncclUniqueId> send_ids, recv_ids;
  const Tag tag{Kind::kControl, pipeline::kBootstrapIteration, 0, 0};
  for (int peer : {rank - 1, rank + 1}) {
    if (peer < 0 || peer >= world_size) {
      continue;
    }
    NCCL_TRY(ncclGetUniqueId(&send_ids[peer]));
    std::vector<float> msg(kBootstrapFloats, 0.0f);
    auto* bytes = reinterpret_cast<unsigned char*>(msg.data());
    std::memcpy(bytes, uuid, kUuidBytes);
    std::memcpy(bytes + kUuidBytes, &host_id, kHostIdBytes);
    std::memcpy(bytes + kUuidBytes + kHostIdBytes, &send_ids[peer], sizeof(ncclUniqueId));
    if (auto ok = bootstrap->send(peer, tag, std::move(msg)); !ok) {
      return ok.error();
    }
  }
  for (const auto& [peer, unused] : send_ids) {
    auto got = bootstrap->recv(peer, tag, Clock::now() + kBootstrapTimeout);
    if (!got) {
      return got.error();
    }
    if (got->size() != kBootstrapFloats) {
      return make_error(Errc::kIo, "rank " + std::to_string(peer) + " sent a bootstrap message of " +
                                       std::to_string(got->size()) + " floats, not " +
                                       std::to_string(kBootstrapFloats) + ": is it running the nccl transport?");
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(got->data());
    std::uint64_t peer_host_id = 0;
    std::memcpy(&peer_host_id, bytes + kUuidBytes, kHostIdBytes);
    if (std::memcmp(bytes, uuid, kUuidBytes) == 0 && peer_host_id == host_id) {
      return make_error(Errc::kUnsupported,
                        "ranks " + std::to_string(rank) + " and " + std::to_string(peer) + " are both on GPU " +
                            std::to_string(dev) + " (" + prop.name + ", UUID " + hex(uuid, kUuidBytes) +
                            ") of one host: NCCL refuses two ranks of a communicator on one GPU; give each rank "
                            "its own GPU (CUDA_VISIBLE_DEVICES), or its own NCCL_HOSTID so NCCL treats them as "
                            "hosts apart and connects them through sockets (contend run does, per namespace), or "
                            "use the tcp transport");
    }
    std::memcpy(&recv_ids[peer], bytes + kUuidBytes + kHostIdBytes, sizeof(ncclUniqueId));
  }
  auto transport = std::make_unique<NcclTransport>(std::move(bootstrap), dev, message_floats);
  if (auto ok = transport->start(send_ids, recv_ids); !ok) {
    return ok.error();
  }
  return std::unique_ptr<Transport>(std::move(transport));
}

void register_nccl_transport() {
  pipeline::transports().add(
      nccl_transport_entry(),
      pipeline::TransportKind{.needs_device = true,
                              .make = [](const Spec&, std::unique_ptr<Transport> bootstrap, int rank, int world_size,
                                         std::size_t message_floats) {
                                return connect_nccl(std::move(bootstrap), rank, world_size, message_floats);
                              },
                              .environment = nccl_environment});
}

}  // namespace contend::pipeline_cuda
