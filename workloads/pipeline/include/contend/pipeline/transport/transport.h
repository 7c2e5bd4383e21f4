#pragma once
// Transports move activations and gradients between adjacent stages. Sends are asynchronous
// (queued to a sender thread, which owns the socket's write side); receives return the message
// with a given tag, which a receiver thread has usually read already (receives are effectively
// posted early: the socket is read as soon as data arrives).
//  - InProcHub: stages as threads of one process (tests);
//  - TcpTransport (tcp_transport.h): one TCP connection per adjacent pair.
// Errors name the peer: "rank 2 (198.18.0.6:29500) closed the connection" or
// "timed out after 30s waiting for activation of micro-batch 3 from rank 1".
// Thread-safe: send and recv may be called from different threads.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "contend/common/registry.h"
#include "contend/common/result.h"
#include "contend/common/spec.h"

namespace contend::pipeline {

// kControl: small messages of the adaptive scheduler's protocol (coordinator.h), and with
// iteration kBootstrapIteration those of a transport's bootstrap (nccl: unique ids).
enum class Kind : std::uint8_t { kActivation = 0, kGradient = 1, kControl = 4 };

struct Tag {
  Kind kind = Kind::kActivation;
  int iteration = 0;
  int microbatch = 0;
  int stage = 0;  // the pipeline stage the tensor is for (several per rank in interleaved schedules)
  friend bool operator<(const Tag& a, const Tag& b) {
    return std::tie(a.kind, a.iteration, a.microbatch, a.stage) < std::tie(b.kind, b.iteration, b.microbatch, b.stage);
  }
};

// "activation of micro-batch 3 for stage 2 (iteration 0)".
std::string describe(const Tag& tag);
inline constexpr int kBootstrapIteration = -1;
// Tensors of iteration kProbeIteration are the coordinator's probe of the links before iteration 0:
// activations and gradients, so the receiver times them as it times the pipeline's own.
inline constexpr int kProbeIteration = -2;

using Deadline = std::chrono::steady_clock::time_point;

// Completes a tensor a compute backend is still producing (cuda: waits for its device-to-host copy
// and fills it in). A transport runs it on its sending thread just before the tensor goes out, so
// the copy overlaps the stage's next computation and the socket takes the tensor as soon as it is
// there. Empty: the tensor is complete.
using Completion = std::function<void(std::vector<float>&)>;

// Reusable tensor buffers, so steady-state iterations allocate (and zero, and fault in) nothing.
// Thread-safe.
class BufferPool {
 public:
  // A buffer of `floats` elements (contents unspecified).
  std::vector<float> take(std::size_t floats);
  // Returns a buffer for reuse; the pool keeps at most 256.
  void give(std::vector<float> buffer);

 private:
  std::mutex mutex_;
  std::vector<std::vector<float>> free_;
};

// What arrived from one peer, timed by the receiver from the end of each frame's header: a frame
// streams at what the link gives it once its header is in, so this is the link's goodput for
// this traffic, not counting the time a tensor waited behind others. Shaped links are token
// buckets (HTB, TBF): after an idle spell a burst passes at once and then the rate holds. So the
// second half of each frame is timed apart: its rate is the sustained one, and the bytes the whole
// frame got beyond that rate are the burst it found. Only frames of at least kMinTimedBytes count:
// smaller ones arrive in one segment and would time nothing but a copy.
struct TransferTotals {
  std::uint64_t bytes = 0;
  double seconds = 0;
  int frames = 0;
  std::uint64_t tail_bytes = 0;    // the second halves of the frames...
  double tail_seconds = 0;         // ...and the time they took
  double burst_bytes = 0;          // the most bytes a frame got beyond the sustained rate
  std::uint64_t recent_bytes = 0;  // the second halves of the last kRecentFrames frames...
  double recent_seconds = 0;       // ...and their time: the link as it is now, not on average
  double recent_burst_bytes = 0;   // burst_bytes over those frames only
};
inline constexpr int kRecentFrames = 4;
inline constexpr std::uint64_t kMinTimedBytes = 64 * 1024;

// What the tensors sent to one peer cost the sender, timed from the moment its sending thread took
// each (so not counting the time it waited behind others) to the moment the kernel had all of it:
// a stall before the send shows here, and nowhere on the receiver's clock.
struct SendTotals {
  std::uint64_t bytes = 0;
  double seconds = 0;
  int frames = 0;
};

// How sends behave, set once before the first (Transport::set_send_options).
struct SendOptions {
  // Seconds each tensor to `peer` waits before it is sent, one after another per peer: the stall
  // plan of the emulated network (PipeMorph's stragglers). Unset: none.
  std::function<double(int peer, const Tag& tag)> stall_s{};
  // A send returns once its tensor is with the kernel, stall included (Megatron's blocking
  // sends: the compute waits); false: at once, the sending thread does the rest (the default).
  bool wait = false;
  // How many tensors to one peer may be in their stalls at once: PipeMorph's CPU delegates per
  // role, each sleeping the stall before its send; 1: one after another, as a spin before each
  // ncclSend serialises its stream. A tensor's stall starts when it is queued and the tensor
  // `delegates` before it has been sent.
  int delegates = 1;
  // The transport's TransportKind::sent_when_delivered: whether "sent" is once the tensor has left
  // (nccl) or once the kernel holds it (tcp), which the simulator and the policies' model follow.
  bool sent_when_delivered = false;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Buffers for tensors to send, and the way back for received ones once used.
  std::vector<float> buffer(std::size_t floats) { return pool_.take(floats); }
  void recycle(std::vector<float> buffer) { pool_.give(std::move(buffer)); }
  // Queues `data` for `peer`; returns at once. `complete` (if any) runs on the sending thread
  // before `data` is written. Fails when the link to `peer` is broken.
  virtual Result<void> send(int peer, Tag tag, std::vector<float> data, Completion complete = {}) = 0;
  // The message `tag` from `peer`, waiting until `deadline` (kTimeout) or until the link breaks.
  virtual Result<std::vector<float>> recv(int peer, Tag tag, Deadline deadline) = 0;
  // Blocks until everything queued has been handed to the kernel (or the link broke).
  virtual Result<void> flush() = 0;
  virtual std::uint64_t bytes_sent() const = 0;
  // Tells the neighbours that this rank failed and why, before it goes away: their receives from
  // it then fail with "rank R failed: <why>", so an error names its root cause rather than a
  // dropped connection. Best effort; call once, right before the transport is destroyed.
  virtual void abort(const std::string& why) { (void)why; }
  // Transfers received from `peer` since the last call (zero where the transport does not time
  // them, as the in-process one). Thread-safe.
  TransferTotals take_transfers(int peer);
  // Tensors sent to `peer` since the last call (SendTotals). Thread-safe.
  SendTotals take_sends(int peer);
  // Sets how sends behave; call before the first send. kUnsupported where the transport cannot
  // (the base: none can but the default).
  virtual Result<void> set_send_options(SendOptions options);

 protected:
  // One frame of `bytes` read in `seconds`, its last `tail_bytes` in `tail_seconds`.
  void record_transfer(int peer, std::uint64_t bytes, double seconds, std::uint64_t tail_bytes, double tail_seconds);
  // One tensor of `bytes` to `peer` that took the sender `seconds` (SendTotals).
  void record_send(int peer, std::uint64_t bytes, double seconds);
  BufferPool pool_;

 private:
  std::mutex transfers_mutex_;
  std::map<int, TransferTotals> transfers_;
  std::map<int, SendTotals> sends_;
  struct Frame {
    std::uint64_t tail_bytes;
    double tail_seconds;
    double burst_bytes;
  };
  std::map<int, std::vector<Frame>> recent_;  // the last frames per peer
};

// Transports by name: tcp built in (the worker's own connections), optional parts (nccl) add
// themselves at startup. A transport is made from the TCP transport the worker connected first
// (its bootstrap connection, which it may keep for small messages), the rank, the world size and
// the largest tensor it will carry in floats (the backend's message_floats(): nccl allocates its
// buffers before it starts).
struct TransportKind {
  bool needs_device = false;  // moves device memory (nccl): a host without the device cannot run it
  // Whether a sending thread is done with a tensor only once it has left (nccl: the next message
  // reuses its buffers); else once the kernel holds it (tcp: in the socket's buffer, still on its
  // way), so the next tensor's stall may run while it is on the wire (send_options_of says it).
  bool sent_when_delivered = false;
  std::function<Result<std::unique_ptr<Transport>>(const Spec& spec, std::unique_ptr<Transport> bootstrap, int rank,
                                                   int world_size, std::size_t message_floats)>
      make{};
  // The environment ("KEY=VALUE" items) a worker needs on a node whose link interfaces are
  // `ifnames` and whose namespace or host is `host_id`; unset for transports that need none.
  std::function<std::vector<std::string>(const std::vector<std::string>& ifnames, const std::string& host_id)>
      environment{};
};
Registry<TransportKind>& transports();
// How a transport spec's sends behave: "sends=wait" (SendOptions::wait) and "delegates=N".
SendOptions send_options_of(const Spec& transport);
// The parameters every transport declares: "sends" (async, the default, or wait) and "delegates".
std::vector<ParamDef> send_params();

// Received messages waiting for their receive, per (peer, tag), and the error of each broken
// peer. Thread-safe.
class Mailbox {
 public:
  void put(int peer, Tag tag, std::vector<float> data);
  // Marks `peer` broken: receives from it fail with `error` once its queued messages are gone.
  void fail(int peer, Error error);
  Result<std::vector<float>> take(int peer, Tag tag, Deadline deadline, const std::string& peer_name);

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::pair<int, Tag>, std::vector<float>> messages_;
  std::map<int, Error> broken_;
};

// Stages of one process talking through shared mailboxes.
class InProcHub {
 public:
  explicit InProcHub(int ranks);
  // The transport of `rank`; the hub must outlive it.
  std::unique_ptr<Transport> transport(int rank);
  // Breaks every link of `rank` (tests of failure handling).
  void fail_rank(int rank, const std::string& why);

 private:
  friend class InProcTransport;
  std::vector<std::unique_ptr<Mailbox>> boxes_;  // boxes_[r]: what rank r receives
};

}  // namespace contend::pipeline
