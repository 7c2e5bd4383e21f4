#include "transport/tcp_connect.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "contend/common/units.h"
#include "transport/frame.h"

namespace contend::pipeline::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string timeout_text(const TcpOptions& o) {
  return format_seconds(std::chrono::duration<double>(o.connect_timeout).count());
}

Result<void> tune(TcpSocket& s, const TcpOptions& o) {
  if (auto ok = s.set_no_delay(); !ok) {
    return ok;
  }
  if (o.socket_buffer_bytes > 0) {
    if (auto ok = s.set_buffers(o.socket_buffer_bytes); !ok) {
      return ok;
    }
  }
  return s.set_congestion(o.congestion);
}

Result<void> hello(TcpSocket& s, const TcpOptions& o) {
  const FrameHeader h = hello_header(o.rank, o.world_size, o.token);
  return s.send_all(&h, sizeof h);
}

// Reads `n` bytes within one deadline for all of them (a stranger sending a byte now and then
// cannot hold the acceptor past `wait`): true; false when they did not come in time or the
// connection closed first.
Result<bool> read_within(TcpSocket& s, void* data, std::size_t n, std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  char* p = static_cast<char*>(data);
  for (std::size_t got = 0; got < n;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto readable = s.wait_readable(std::max(left, std::chrono::milliseconds(0)));
    if (!readable || !*readable) {
      return readable ? Result<bool>(false) : readable.error();
    }
    auto r = s.recv_some(p + got, n - got);
    if (!r || !*r || **r == 0) {
      return r ? Result<bool>(false) : r.error();
    }
    got += **r;
  }
  return true;
}

// Reads a connection's greeting within `wait`: the rank it is, one of `from`, in a world of the
// same size. std::nullopt when it is no greeting of this run (nothing in time, another program's
// bytes, another run's token): a stranger's connection, for the caller to close and ignore. An
// error when it is this run's worker with another configuration.
Result<std::optional<int>> expect_hello(TcpSocket& s, const TcpOptions& o, const std::vector<int>& from,
                                        std::chrono::milliseconds wait) {
  FrameHeader h;
  auto got = read_within(s, &h, sizeof h, wait);
  if (!got || !*got || h.magic != kFrameMagic || h.kind != kHello || (o.token != 0 && hello_token(h) != o.token)) {
    return std::optional<int>();
  }
  const int rank = static_cast<int>(h.iteration);
  if (std::find(from.begin(), from.end(), rank) == from.end() || static_cast<int>(h.microbatch) != o.world_size) {
    std::string expected;
    for (int r : from) {
      expected += (expected.empty() ? "" : " or ") + std::to_string(r);
    }
    return make_error(Errc::kInvalidArgument, "expected rank " + expected + " of " + std::to_string(o.world_size) +
                                                  ", got rank " + std::to_string(h.iteration) + " of " +
                                                  std::to_string(h.microbatch) + ": check CONTEND_PEERS");
  }
  return std::optional<int>(rank);
}

Result<TcpSocket> listen(const TcpOptions& o) {
  auto self = Endpoint::parse(o.peers[o.rank]);
  if (!self) {
    return self.error();
  }
  auto listener = TcpSocket::open("the listener of rank " + std::to_string(o.rank));
  if (!listener) {
    return listener.error();
  }
  if (auto ok = tune(*listener, o); !ok) {
    return ok.error();
  }
  // On loopback, loopback only; else any address of the node: each neighbour comes over the link
  // it shares with this rank (a namespace holds only its node's addresses).
  const bool loopback = o.peers[o.rank].rfind("127.", 0) == 0;
  if (auto ok = listener->listen_on(loopback ? *self : self->any_address(), 8); !ok) {
    return ok.error();
  }
  return listener;
}

std::string missing_ranks(const TcpOptions& o, const std::vector<int>& from, const std::map<int, TcpSocket>& got) {
  std::string missing;
  for (int r : from) {
    missing += got.count(r) != 0 ? "" : (missing.empty() ? "" : ", ") + peer_name(o, r);
  }
  return missing;
}

// Accepts the neighbours in `from` on this rank's port, identifying each by its greeting.
Result<std::map<int, TcpSocket>> accept_peers(const TcpOptions& o, const std::vector<int>& from,
                                              Clock::time_point deadline) {
  std::map<int, TcpSocket> out;
  if (from.empty()) {
    return out;
  }
  auto listener = listen(o);
  if (!listener) {
    return listener.error();
  }
  while (out.size() < from.size()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return make_error(Errc::kTimeout, missing_ranks(o, from, out) + " did not connect to " + o.peers[o.rank] +
                                            " within " + timeout_text(o));
    }
    auto accepted =
        listener->accept(std::min(left, std::chrono::milliseconds(200)), "a peer of rank " + std::to_string(o.rank));
    if (!accepted) {
      return accepted.error();
    }
    if (!*accepted) {
      continue;
    }
    TcpSocket s = std::move(**accepted);
    const auto wait =
        std::min(o.greeting_timeout, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    auto peer = expect_hello(s, o, from, wait);
    if (!peer) {
      return peer.error();
    }
    if (!*peer || out.count(**peer) != 0) {
      std::fprintf(stderr, "rank %d: ignored a connection to %s that did not greet as this run's worker\n", o.rank,
                   o.peers[o.rank].c_str());
      continue;  // a stranger's (or a second from one rank): closed as `s` goes
    }
    if (auto ok = hello(s, o); !ok) {
      return ok.error();
    }
    s.set_name(peer_name(o, **peer));
    out.emplace(**peer, std::move(s));
  }
  return out;
}

// A tuned socket for `peer`, not connected yet.
Result<TcpSocket> open_for(const TcpOptions& o, int peer) {
  auto s = TcpSocket::open(peer_name(o, peer));
  if (!s) {
    return s.error();
  }
  if (auto ok = tune(*s, o); !ok) {
    return ok.error();
  }
  return s;
}

// Connects to `peer`, trying again every 100 ms until the deadline while it is not up yet, and
// greets it both ways.
Result<TcpSocket> connect_peer(const TcpOptions& o, int peer, Clock::time_point deadline) {
  const auto reach = o.reach.find(peer);
  const std::string& where = reach != o.reach.end() ? reach->second : o.peers[peer];
  auto address = Endpoint::parse(where);
  if (!address) {
    return address.error();
  }
  std::string last = "no attempt";
  while (Clock::now() < deadline) {
    auto s = open_for(o, peer);
    if (!s) {
      return s.error();
    }
    if (auto connected = s->connect(*address); !connected) {
      last = connected.error().message;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (auto ok = hello(*s, o); !ok) {
      return ok.error();
    }
    // The peer answers once its acceptor reaches this connection: give it until the deadline.
    auto greeted =
        expect_hello(*s, o, {peer}, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    if (!greeted) {
      return greeted.error();
    }
    if (!*greeted) {
      return make_error(Errc::kIo, peer_name(o, peer) + ": " + where + " accepted the connection but nothing there " +
                                       "greeted as this run's worker within " + timeout_text(o) +
                                       " (another program listening on its port, or another run's worker?)");
    }
    return s;
  }
  return make_error(Errc::kTimeout, "could not connect to " + peer_name(o, peer) + " at " + where + " within " +
                                        timeout_text(o) + " (last attempt: " + last + ")");
}

}  // namespace

std::string peer_name(const TcpOptions& o, int rank) {
  return "rank " + std::to_string(rank) + " (" + o.peers[rank] + ")";
}

bool connects_to(const TcpOptions& o, int peer) {
  const bool wrap = o.world_size > 2 && std::min(o.rank, peer) == 0 && std::max(o.rank, peer) == o.world_size - 1;
  return wrap ? o.rank == o.world_size - 1 : o.rank < peer;
}

Result<std::map<int, TcpSocket>> connect_neighbors(const TcpOptions& o, const std::vector<int>& neighbors) {
  std::vector<int> incoming;
  std::vector<int> outgoing;
  for (int n : neighbors) {
    CONTEND_CHECK(n >= 0 && n < o.world_size && n != o.rank, "connect_neighbors: neighbour out of range");
    (connects_to(o, n) ? outgoing : incoming).push_back(n);
  }
  const auto deadline = Clock::now() + o.connect_timeout;
  Result<std::map<int, TcpSocket>> accepted = std::map<int, TcpSocket>{};
  std::thread acceptor([&] { accepted = accept_peers(o, incoming, deadline); });
  std::map<int, TcpSocket> connected;
  Result<void> outcome;
  for (int n : outgoing) {
    auto s = connect_peer(o, n, deadline);
    if (!s) {
      outcome = s.error();
      break;
    }
    connected.emplace(n, std::move(*s));
  }
  acceptor.join();
  if (!outcome) {
    return outcome.error();
  }
  if (!accepted) {
    return accepted.error();
  }
  connected.merge(*accepted);
  return connected;
}

}  // namespace contend::pipeline::detail
