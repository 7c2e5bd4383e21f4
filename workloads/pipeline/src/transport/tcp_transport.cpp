#include "contend/pipeline/transport/tcp_transport.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "transport/tcp_connect.h"
#include "transport/tcp_link.h"

namespace contend::pipeline {
namespace {

// The transport of one rank: a TcpLink per neighbour (tcp_link.h) and the mailbox their receivers
// fill. Thread-safe as Transport requires: the links are made before it is shared and never change.
class TcpTransport final : public Transport {
 public:
  TcpTransport(std::map<int, TcpSocket> sockets, detail::TcpLink::Frames frames) {
    for (auto& [peer, socket] : sockets) {
      const int p = peer;
      auto meter = [this, p](std::uint64_t bytes, double seconds, std::uint64_t tail_bytes, double tail_seconds) {
        record_transfer(p, bytes, seconds, tail_bytes, tail_seconds);
      };
      auto sent = [this, p](std::uint64_t bytes, double seconds) { record_send(p, bytes, seconds); };
      links_.emplace(peer,
                     std::make_unique<detail::TcpLink>(std::move(socket), peer, box_, pool_, frames, meter, sent));
    }
  }
  // The links stop (their threads use box_ and pool_) before the members they use go.
  ~TcpTransport() override { links_.clear(); }

  Result<void> send(int peer, Tag tag, std::vector<float> data, Completion complete = {}) override {
    bytes_ += data.size() * sizeof(float);
    return link(peer).send(tag, std::move(data), std::move(complete));
  }
  Result<std::vector<float>> recv(int peer, Tag tag, Deadline deadline) override {
    return box_.take(peer, tag, deadline, link(peer).name());
  }
  Result<void> flush() override {
    for (auto& [peer, l] : links_) {
      if (auto ok = l->flush(); !ok) {
        return ok;
      }
    }
    return {};
  }
  std::uint64_t bytes_sent() const override { return bytes_; }
  Result<void> set_send_options(SendOptions options) override {
    for (auto& [peer, l] : links_) {
      l->set_send_options(options);
    }
    return {};
  }
  void abort(const std::string& why) override {
    for (auto& [peer, l] : links_) {
      l->fail(why);
    }
  }

 private:
  detail::TcpLink& link(int peer) {
    auto it = links_.find(peer);
    CONTEND_CHECK(it != links_.end(), "a transfer with rank " + std::to_string(peer) + ", not a neighbour");
    return *it->second;
  }

  Mailbox box_;
  std::map<int, std::unique_ptr<detail::TcpLink>> links_;  // by neighbouring rank
  std::atomic<std::uint64_t> bytes_{0};
};

Result<void> check_options(const TcpOptions& o) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    return make_error(Errc::kInvalidArgument,
                      "rank " + std::to_string(o.rank) + " outside a world of " + std::to_string(o.world_size));
  }
  if (static_cast<int>(o.peers.size()) != o.world_size) {
    return make_error(Errc::kInvalidArgument, "the peer list has " + std::to_string(o.peers.size()) +
                                                  " entries for a world of " + std::to_string(o.world_size));
  }
  for (const auto& p : o.peers) {
    if (auto ok = Endpoint::parse(p); !ok) {
      return ok.error();
    }
  }
  return {};
}

}  // namespace

std::string new_run_token() {
  std::random_device random;
  const std::uint64_t token = (static_cast<std::uint64_t>(random()) << 32 | random()) | 1;  // never 0
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(token));
  return text;
}

Result<std::uint64_t> run_token_from_environment() {
  const char* text = std::getenv(kRunTokenVariable);
  if (text == nullptr || *text == '\0') {
    return std::uint64_t{0};
  }
  const std::string t = text;
  if (t.size() != 16 || t.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return make_error(Errc::kInvalidArgument, std::string(kRunTokenVariable) + ": expected 16 hex digits");
  }
  return std::stoull(t, nullptr, 16);
}

Result<std::unique_ptr<Transport>> connect_tcp(const TcpOptions& o) {
  if (auto ok = check_options(o); !ok) {
    return ok.error();
  }
  std::vector<int> neighbors = o.neighbors;
  if (neighbors.empty()) {
    for (int r : {o.rank - 1, o.rank + 1}) {
      if (r >= 0 && r < o.world_size) {
        neighbors.push_back(r);
      }
    }
  }
  auto sockets = detail::connect_neighbors(o, neighbors);
  if (!sockets) {
    return sockets.error();
  }
  return std::unique_ptr<Transport>(
      std::make_unique<TcpTransport>(std::move(*sockets), detail::TcpLink::Frames{o.checksum, o.max_message_bytes}));
}

}  // namespace contend::pipeline
