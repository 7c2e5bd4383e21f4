#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

#include "flows/flow_udp.h"

using namespace contend;
using namespace contend::emulator;

namespace {
// Datagram sizes waiting on `fd` (non-blocking reads until none is left).
std::vector<ssize_t> drain(int fd) {
  std::vector<ssize_t> sizes;
  std::vector<char> buf(1 << 16);
  for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT)) >= 0;) {
    sizes.push_back(n);
  }
  return sizes;
}
}  // namespace

TEST_CASE("where a socket refuses UDP GSO the sender sends one datagram a message and says why", "[flows]") {
  // An AF_UNIX datagram pair: sendmmsg works, UDP_SEGMENT does not (as on a kernel without GSO).
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) == 0);
  std::vector<UdpSocket> socks;
  socks.push_back(UdpSocket::adopt(Fd(pair[0]), "one end of a socketpair"));
  Fd peer(pair[1]);
  UdpBatchSender sender(socks, 1000, 1e9);
  CHECK_THAT(sender.path(),
             Catch::StartsWith("sendmmsg without UDP GSO (this kernel lacks it: setsockopt(UDP_SEGMENT"));
  CHECK(sender.plan().segments == 1);
  CHECK(sender.plan().max_buffers == kMaxDatagramsPerCall);
  auto sent = sender.send(5);
  REQUIRE(sent.ok());
  CHECK(*sent == 5000);
  CHECK(drain(peer.get()) == std::vector<ssize_t>(5, 1000));
}

TEST_CASE("with UDP GSO a batch leaves as datagrams of the flow's size, a partial buffer included", "[flows]") {
  auto rx = UdpSocket::open("receiver");
  REQUIRE(rx.ok());
  REQUIRE(rx->set_receive_buffer(4 << 20).ok());
  REQUIRE(rx->bind(Endpoint::make("127.0.0.1", 0).value()).ok());
  const Endpoint to = rx->local_endpoint().value();
  std::vector<UdpSocket> socks;
  socks.push_back(UdpSocket::open("sender").value());
  REQUIRE(socks[0].set_nonblocking().ok());
  REQUIRE(socks[0].connect(to).ok());
  UdpBatchSender sender(socks, 1472, 10e9);
  if (sender.path().find("without") != std::string::npos) {
    WARN("this kernel has no UDP GSO on loopback, nothing to test: " << sender.path());
    return;
  }
  CHECK(sender.path() == "sendmmsg, UDP GSO (44 x 1472 B a buffer)");
  const std::size_t datagrams = 2 * sender.plan().segments + 3;  // two full buffers and 3 datagrams
  auto sent = sender.send(datagrams);
  REQUIRE(sent.ok());
  CHECK(*sent == datagrams * 1472);
  // No UDP_GRO on the receiver: the kernel cut every buffer into datagrams of 1472 B.
  CHECK(drain(rx->fd()) == std::vector<ssize_t>(datagrams, 1472));
}
