#pragma once
// Private: one TCP connection between neighbouring ranks, with its two threads. The sender thread
// owns the socket's write side: it takes queued tensors in order, completes each (a GPU copy),
// waits the tensor's stall (SendOptions: so a stalled link's messages go one after another) and
// writes its frame, timing the tensor from taking it to the kernel having it (`sent`); at close
// it sends the closing frame (kBye, or kFailed with the reason set by fail()). The receiver thread owns the read side:
// it reads every frame as soon as it arrives, times each tensor (Transport::record_transfer, through `meter`) and puts
// it in the mailbox; a peer that goes away without its closing frame breaks the link, so every receive from it fails
// naming it. Thread-safe: send, flush and fail may be called from any thread; close once, from
// the owner (the destructor does).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "contend/common/socket.h"
#include "contend/pipeline/transport/stall_clock.h"
#include "contend/pipeline/transport/transport.h"
#include "transport/frame.h"

namespace contend::pipeline::detail {

class TcpLink {
 public:
  // A frame of `bytes` read in `seconds`, its last `tail_bytes` in `tail_seconds`.
  using Meter = std::function<void(std::uint64_t bytes, double seconds, std::uint64_t tail_bytes, double tail_seconds)>;
  // A tensor of `bytes` that took the sender `seconds`, stall included.
  using SendMeter = std::function<void(std::uint64_t bytes, double seconds)>;

  struct Frames {
    bool checksum = false;                // checksum every payload sent; verify every one received
    std::uint64_t max_message_bytes = 0;  // a tensor header announcing more is refused, nothing allocated
  };

  // Starts both threads on `socket`; received tensors go to `box` as from `peer`; buffers come
  // from and go back to `pool` (which, like `box`, must outlive the link).
  TcpLink(TcpSocket socket, int peer, Mailbox& box, BufferPool& pool, Frames frames, Meter meter, SendMeter sent);
  ~TcpLink();
  TcpLink(const TcpLink&) = delete;
  TcpLink& operator=(const TcpLink&) = delete;

  // "rank 2 (198.18.0.6:29500)": the peer, as errors name it.
  const std::string& name() const { return socket_.name(); }
  // Sets the stall and wait options (SendOptions); before the first send.
  void set_send_options(SendOptions options) {
    stalls_ = StallClock(options.delegates);
    options_ = std::move(options);
  }
  // Queues `data` (with options.wait: and returns once it is written); fails at once when an
  // earlier send broke the connection.
  Result<void> send(Tag tag, std::vector<float> data, Completion complete);
  // Blocks until every queued tensor is with the kernel, or the connection broke.
  Result<void> flush();
  // Makes the closing frame say that this rank failed and why (Transport::abort).
  void fail(const std::string& why);
  // Drains the queue, sends the closing frame, waits briefly for the peer's, stops both threads.
  void close();

 private:
  struct Item {
    Tag tag;
    std::vector<float> data;
    Completion complete;
    std::chrono::steady_clock::time_point queued;
  };
  void send_loop();
  // Takes the next item, or false once stopping with nothing queued.
  bool next(Item& item);
  void write(Item& item);
  void send_closing_frame();
  void receive_loop();
  // Reads the payload of `h` into a pooled buffer, timing its two halves (TransferTotals).
  Result<bool> read_tensor(const FrameHeader& h);
  // Marks the peer broken: receives from it fail with `message` once queued messages are gone.
  void broken(const std::string& message);

  TcpSocket socket_;
  const int peer_;
  Mailbox& box_;
  BufferPool& pool_;
  const Frames frames_;
  const Meter meter_;
  const SendMeter sent_;
  SendOptions options_;  // set before the first send, read by the sender thread
  std::mutex mutex_;     // guards the members below it
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::uint64_t queued_ = 0;   // items ever queued...
  std::uint64_t written_ = 0;  // ...and ever written (or dropped on a broken link)
  StallClock stalls_{1};       // sender thread; set with options_
  bool writing_ = false;
  bool stopping_ = false;
  Result<void> send_error_;
  std::string failure_;  // set by fail(): the closing frame carries it
  // The reason the peer's closing frame gave for failing, and whether its receiver still reads:
  // a send that breaks waits briefly for them, so it names why the peer went (the root cause).
  std::string peer_failure_;
  bool receiving_ = true;
  std::atomic<bool> closed_{false};
  std::atomic<bool> peer_done_{false};
  std::thread receiver_;
  std::thread sender_;
};

}  // namespace contend::pipeline::detail
