#include "contend/common/socket.h"

#include <catch2/catch.hpp>
#include <thread>

using namespace contend;

TEST_CASE("an endpoint is an IPv4 address and a port, and a bad one is refused saying why", "[socket]") {
  auto e = Endpoint::parse("198.18.0.2:29500");
  REQUIRE(e.ok());
  CHECK(e->ip() == "198.18.0.2");
  CHECK(e->port() == 29500);
  CHECK(e->str() == "198.18.0.2:29500");
  CHECK(Endpoint::parse("localhost:80")->ip() == "127.0.0.1");
  CHECK(e->any_address().str() == "0.0.0.0:29500");
  CHECK_THAT(Endpoint::parse("198.18.0.2").error().message, Catch::Contains("expected host:port"));
  CHECK_THAT(Endpoint::parse("198.18.0.2:0").error().message, Catch::Contains("port 1-65535"));
  CHECK_THAT(Endpoint::parse("198.18.0.2:70000").error().message, Catch::Contains("port 1-65535"));
  CHECK_THAT(Endpoint::parse("node1:80").error().message, Catch::Contains("expected an IPv4 address, got \"node1\""));
  CHECK_THAT(Endpoint::parse(std::string("1.2.3.4\0x:80", 11)).error().message, Catch::Contains("IPv4"));
}

TEST_CASE("a TCP socket pair on loopback carries a frame whole, and a clean close is told from a cut one", "[socket]") {
  auto listener = TcpSocket::open("listener");
  REQUIRE(listener.ok());
  REQUIRE(listener->listen_on(Endpoint::make("127.0.0.1", 0).value()).ok());
  const Endpoint at = listener->local_endpoint().value();
  auto client = TcpSocket::open("client");
  REQUIRE(client.ok());
  REQUIRE(client->set_no_delay().ok());
  REQUIRE(client->connect(at).ok());
  auto accepted = listener->accept(std::chrono::milliseconds(2000), "server");
  REQUIRE(accepted.ok());
  REQUIRE(accepted->has_value());
  TcpSocket server = std::move(**accepted);
  std::vector<char> big(3 << 20, 'x');
  std::thread writer([&] {
    char head[4] = {'a', 'b', 'c', 'd'};
    iovec iov[2] = {{head, sizeof head}, {big.data(), big.size()}};
    CHECK(client->send_all(iov, 2).ok());
    (void)client->shutdown(SHUT_WR);
  });
  std::vector<char> got(4 + big.size());
  auto read = server.recv_exact(got.data(), got.size());
  writer.join();
  REQUIRE(read.ok());
  CHECK(*read);
  CHECK(std::string(got.data(), 4) == "abcd");
  CHECK(got.back() == 'x');
  char more = 0;
  auto end = server.recv_exact(&more, 1);
  REQUIRE(end.ok());
  CHECK_FALSE(*end);  // closed before the first byte: a clean end
}

TEST_CASE("a refused connect is told apart as a peer not up yet, and names the call and the socket", "[socket]") {
  auto probe = TcpSocket::open("probe");
  REQUIRE(probe->listen_on(Endpoint::make("127.0.0.1", 0).value()).ok());
  const Endpoint closed = probe->local_endpoint().value();
  probe = TcpSocket::open("probe");  // the listener is gone: nothing listens on that port now
  auto s = TcpSocket::open("rank 1 (127.0.0.1:1)");
  auto connected = s->connect(closed);
  REQUIRE_FALSE(connected.ok());
  CHECK(peer_not_up(connected.error()));
  CHECK_THAT(connected.error().message, Catch::StartsWith("connect(" + closed.str() + ") on rank 1 (127.0.0.1:1): "));
}

TEST_CASE("an unknown congestion control is refused naming the ones the kernel has", "[socket]") {
  auto s = TcpSocket::open("stream");
  auto ok = s->set_congestion("no-such-cc");
  REQUIRE_FALSE(ok.ok());
  CHECK(ok.error().code == Errc::kInvalidArgument);
  CHECK_THAT(ok.error().message, Catch::Contains("setsockopt(TCP_CONGESTION=no-such-cc) on stream"));
  CHECK_THAT(ok.error().message, Catch::Contains("this kernel has: "));
  CHECK_THAT(ok.error().message, Catch::Contains("cubic"));
}
