// The TCP transport alone, one direction: rank 0 sends `count` tensors of `size` to rank 1 per
// round, rank 1 receives them all and answers with a small control message; rank 0 times each
// round from its first send to that answer. Both ranks print one JSON line at the end: the median
// round's goodput, and this process's CPU time (user + system) over all rounds, so that a script
// can put CPU time per byte beside the goodput (bench/transport_bench.sh runs it against iperf3).
//   contend_bench_transport --rank R --peers A:P,B:P --size 4MiB --count 64 --rounds 5

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "contend/common/units.h"
#include "contend/pipeline/transport/tcp_transport.h"

using namespace contend;
using namespace contend::pipeline;

namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

Result<double> send_round(Transport& t, int round, int count, std::size_t floats) {
  const auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) {
    if (auto ok = t.send(1, Tag{Kind::kActivation, round, i, 0}, t.buffer(floats)); !ok) {
      return ok.error();
    }
  }
  auto ack = t.recv(1, Tag{Kind::kControl, round, 0, 0}, Clock::now() + std::chrono::seconds(120));
  if (!ack) {
    return ack.error();
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Result<void> receive_round(Transport& t, int round, int count) {
  for (int i = 0; i < count; ++i) {
    auto got = t.recv(0, Tag{Kind::kActivation, round, i, 0}, Clock::now() + std::chrono::seconds(120));
    if (!got) {
      return got.error();
    }
    t.recycle(std::move(*got));
  }
  return t.send(0, Tag{Kind::kControl, round, 0, 0}, std::vector<float>(1, 0.0f));
}

struct Options {
  int rank = 0;
  std::string peers;
  std::string size = "4MiB";
  int count = 64;
  int rounds = 5;
  std::string congestion = "cubic";
};

int run(const Options& o) {
  TcpOptions tcp;
  tcp.rank = o.rank;
  tcp.world_size = 2;
  std::stringstream list(o.peers);
  for (std::string p; std::getline(list, p, ',');) {
    tcp.peers.push_back(p);
  }
  tcp.congestion = o.congestion;
  auto bytes = parse_size_bytes(o.size);
  auto transport = bytes ? connect_tcp(tcp) : Result<std::unique_ptr<Transport>>(bytes.error());
  if (!transport) {
    std::fprintf(stderr, "contend_bench_transport %d: %s\n", o.rank, transport.error().message.c_str());
    return 1;
  }
  const std::size_t floats = *bytes / sizeof(float);
  const double cpu0 = cpu_seconds();
  std::vector<double> rounds;
  for (int r = 0; r < o.rounds; ++r) {
    Result<void> ok;
    if (o.rank == 0) {
      auto s = send_round(**transport, r, o.count, floats);
      ok = s ? Result<void>() : Result<void>(s.error());
      if (s) {
        rounds.push_back(static_cast<double>(*bytes) * o.count * 8 / *s);
      }
    } else {
      ok = receive_round(**transport, r, o.count);
    }
    if (!ok) {
      std::fprintf(stderr, "contend_bench_transport %d: %s\n", o.rank, ok.error().message.c_str());
      return 1;
    }
  }
  (void)(*transport)->flush();
  const double cpu = cpu_seconds() - cpu0;
  std::sort(rounds.begin(), rounds.end());
  const double median = rounds.empty() ? 0 : rounds[rounds.size() / 2];
  std::printf("{\"rank\": %d, \"bytes\": %.0f, \"goodput_bps\": %.6g, \"cpu_s\": %.6g}\n", o.rank,
              static_cast<double>(*bytes) * o.count * o.rounds, median, cpu);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"The TCP transport alone, one direction, timed per round (bench/transport_bench.sh)"};
  app.add_option("--rank", o.rank, "0 sends, 1 receives")->required()->check(CLI::Range(0, 1));
  app.add_option("--peers", o.peers, "host:port of rank 0 and rank 1")->required();
  app.add_option("--size", o.size, "tensor size (default 4MiB)");
  app.add_option("--count", o.count, "tensors per round (default 64)")->check(CLI::PositiveNumber);
  app.add_option("--rounds", o.rounds, "rounds; the median round is reported (default 5)")->check(CLI::PositiveNumber);
  app.add_option("--congestion", o.congestion, "TCP congestion control (default cubic)");
  CLI11_PARSE(app, argc, argv);
  return run(o);
}
