#include "transport/tcp_link.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace contend::pipeline::detail {

TcpLink::TcpLink(TcpSocket socket, int peer, Mailbox& box, BufferPool& pool, Frames frames, Meter meter, SendMeter sent)
    : socket_(std::move(socket)),
      peer_(peer),
      box_(box),
      pool_(pool),
      frames_(frames),
      meter_(std::move(meter)),
      sent_(std::move(sent)) {
  receiver_ = std::thread([this] { receive_loop(); });
  sender_ = std::thread([this] { send_loop(); });
}

TcpLink::~TcpLink() {
  close();
}

Result<void> TcpLink::send(Tag tag, std::vector<float> data, Completion complete) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!send_error_.ok()) {
    return send_error_;
  }
  queue_.push_back({tag, std::move(data), std::move(complete), std::chrono::steady_clock::now()});
  const std::uint64_t ticket = ++queued_;
  cv_.notify_all();
  if (options_.wait) {
    cv_.wait(lock, [&] { return written_ >= ticket || !send_error_.ok(); });
    return send_error_;
  }
  return {};
}

Result<void> TcpLink::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return (queue_.empty() && !writing_) || !send_error_.ok(); });
  return send_error_;
}

void TcpLink::fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  failure_ = why;
}

void TcpLink::close() {
  if (closed_.exchange(true)) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  sender_.join();  // drains the queue and sends the closing frame
  (void)socket_.shutdown(SHUT_WR);
  // The peer's receiver sees our closing frame; once the peer closes too, ours sees its frame and
  // the end of the stream. At most 2 s for that.
  for (int i = 0; i < 40 && !peer_done_.load(); ++i) {
    (void)socket_.wait_readable(std::chrono::milliseconds(50));
  }
  (void)socket_.shutdown(SHUT_RDWR);
  receiver_.join();
}

bool TcpLink::next(Item& item) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
  if (queue_.empty()) {
    return false;
  }
  item = std::move(queue_.front());
  queue_.pop_front();
  writing_ = true;
  return true;
}

void TcpLink::write(Item& item) {
  const bool tensor = item.tag.kind != Kind::kControl;
  // The stall runs from when a delegate took the tensor: several may be in theirs at once.
  const auto taken = tensor && options_.stall_s ? stalls_.start(item.queued) : std::chrono::steady_clock::now();
  if (item.complete) {
    item.complete(item.data);
    item.complete = nullptr;  // releases what the backend held for it
  }
  if (tensor && options_.stall_s) {
    StallClock::wait(taken, options_.stall_s(peer_, item.tag));
  }
  const std::uint64_t bytes = item.data.size() * sizeof(float);
  FrameHeader h = tensor_header(item.tag, item.data.data(), bytes, frames_.checksum);
  iovec iov[2] = {{&h, sizeof h}, {item.data.data(), bytes}};
  auto ok = socket_.send_all(iov, 2);
  const auto sent = std::chrono::steady_clock::now();
  if (tensor) {
    stalls_.sent(sent);
  }
  if (ok && tensor && bytes >= kMinTimedBytes) {
    sent_(bytes, std::chrono::duration<double>(sent - taken).count());
  }
  pool_.give(std::move(item.data));
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ok) {
    // A peer that failed closes after its closing frame, which the receiver may not have read yet.
    // The item stays unwritten while this waits, so no flush or waiting send returns before the
    // error is set.
    cv_.wait_for(lock, std::chrono::seconds(1), [&] { return !receiving_ || !peer_failure_.empty(); });
    send_error_ = peer_failure_.empty()
                      ? make_error(ok.error().code, "sending to " + name() + ": the connection broke (" + name() +
                                                        " exited or crashed): " + ok.error().message)
                      : make_error(Errc::kIo, "sending to " + name() + ": " + name() + " failed: " + peer_failure_);
    written_ += queue_.size();
    queue_.clear();
  }
  writing_ = false;
  ++written_;
  cv_.notify_all();
}

void TcpLink::send_loop() {
  Item item;
  while (next(item)) {
    write(item);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!send_error_.ok()) {
      return;
    }
  }
  send_closing_frame();
}

void TcpLink::send_closing_frame() {
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failure = failure_.substr(0, kMaxReasonBytes);
  }
  FrameHeader bye;
  bye.kind = failure.empty() ? kBye : kFailed;
  bye.bytes = failure.size();
  iovec iov[2] = {{&bye, sizeof bye}, {failure.data(), failure.size()}};
  (void)socket_.send_all(iov, 2);
}

void TcpLink::broken(const std::string& message) {
  box_.fail(peer_, make_error(Errc::kIo, message));
}

Result<bool> TcpLink::read_tensor(const FrameHeader& h) {
  std::vector<float> data = pool_.take(h.bytes / sizeof(float));
  // Read in two halves, timing the second apart (TransferTotals says why).
  const std::size_t half = h.bytes / 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto body = socket_.recv_exact(data.data(), half);
  const auto t_half = std::chrono::steady_clock::now();
  if (body && (*body || half == 0)) {
    body = socket_.recv_exact(reinterpret_cast<char*>(data.data()) + half, h.bytes - half);
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (!body || !*body) {
    broken(name() + " closed the connection in the middle of a message");
    return false;
  }
  if ((h.flags & kFlagChecksum) != 0 && fnv1a(data.data(), h.bytes) != h.checksum) {
    broken("checksum mismatch in a message from " + name());
    return false;
  }
  if (h.kind != static_cast<std::uint8_t>(Kind::kControl)) {
    meter_(h.bytes, std::chrono::duration<double>(t1 - t0).count(), h.bytes - half,
           std::chrono::duration<double>(t1 - t_half).count());
  }
  box_.put(peer_, tag_of(h), std::move(data));
  return true;
}

void TcpLink::receive_loop() {
  struct Ended {  // a send that broke may wait for this loop's end (write)
    TcpLink& link;
    ~Ended() {
      std::lock_guard<std::mutex> lock(link.mutex_);
      link.receiving_ = false;
      link.cv_.notify_all();
    }
  } ended{*this};
  for (;;) {
    FrameHeader h;
    auto got = socket_.recv_exact(&h, sizeof h);
    if (!got || !*got) {
      if (!peer_done_.load()) {
        broken(closed_.load() ? "the connection to " + name() + " is closed"
                              : name() + " closed the connection without finishing (it exited or crashed)" +
                                    (got ? std::string() : ": " + got.error().message));
      }
      return;
    }
    if (h.magic != kFrameMagic) {
      broken(name() + " sent a frame without contend's magic");
      return;
    }
    if (h.kind == kBye || h.kind == kFailed) {
      std::string why(std::min<std::uint64_t>(h.bytes, kMaxReasonBytes), '\0');
      auto text = socket_.recv_exact(why.data(), why.size());
      peer_done_ = true;
      if (h.kind == kFailed) {
        std::lock_guard<std::mutex> lock(mutex_);
        peer_failure_ = text && *text ? why : "(no reason given)";
        cv_.notify_all();
      }
      broken(h.kind == kBye ? name() + " finished and closed the connection"
                            : name() + " failed: " + (text && *text ? why : "(no reason given)"));
      continue;
    }
    if (!is_tensor(h)) {
      broken(name() + " sent a frame of unknown kind " + std::to_string(h.kind));
      return;
    }
    if (h.bytes > frames_.max_message_bytes || h.bytes % sizeof(float) != 0) {
      broken(name() + " announced a tensor of " + std::to_string(h.bytes) + " bytes; this run's tensors are whole " +
             "floats of at most " + std::to_string(frames_.max_message_bytes) +
             " bytes (nothing was allocated for it)");
      return;
    }
    if (auto ok = read_tensor(h); !ok || !*ok) {
      return;
    }
  }
}

}  // namespace contend::pipeline::detail
