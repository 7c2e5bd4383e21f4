#include <catch2/catch.hpp>
#include <thread>

#include "contend/pipeline/transport/transport.h"
#include "contend/pipeline_cuda/nccl_transport.h"

using namespace contend;
using namespace contend::pipeline;

namespace {
constexpr std::size_t kFloats = 1 << 20;  // 4 MiB: timed (at least kMinTimedBytes)

// Both ranks connect at once (the bootstrap and the communicators' creation wait for each other).
std::vector<Result<std::unique_ptr<Transport>>> connect_two(InProcHub& hub, int device0, int device1) {
  std::vector<Result<std::unique_ptr<Transport>>> out;
  out.emplace_back(make_error(Errc::kInternal, "not run"));
  out.emplace_back(make_error(Errc::kInternal, "not run"));
  std::thread t0([&] { out[0] = contend::pipeline_cuda::connect_nccl(hub.transport(0), 0, 2, kFloats, device0); });
  std::thread t1([&] { out[1] = contend::pipeline_cuda::connect_nccl(hub.transport(1), 1, 2, kFloats, device1); });
  t0.join();
  t1.join();
  return out;
}
}  // namespace

TEST_CASE("nccl: two ranks on one GPU of one host are refused, saying why", "[gpu]") {
  InProcHub hub(2);
  auto t = connect_two(hub, 0, 0);
  for (int r : {0, 1}) {
    INFO("rank " << r);
    REQUIRE_FALSE(t[r].ok());
    CHECK(t[r].error().code == Errc::kUnsupported);
    CHECK_THAT(t[r].error().message, Catch::Contains("NCCL refuses two ranks") && Catch::Contains("NCCL_HOSTID") &&
                                         Catch::Contains("both on GPU 0"));
  }
}

TEST_CASE("nccl: tensors cross between two GPUs in both directions, tagged and timed", "[gpu2]") {
  InProcHub hub(2);
  auto t = connect_two(hub, 0, 1);
  REQUIRE(t[0].ok());
  REQUIRE(t[1].ok());
  Transport& a = **t[0];
  Transport& b = **t[1];
  const std::size_t n = kFloats;
  const auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(30); };
  for (int mb = 0; mb < 3; ++mb) {
    std::vector<float> act(n), grad(n);
    for (std::size_t i = 0; i < n; ++i) {
      act[i] = static_cast<float>(i % 1000) + static_cast<float>(mb);
      grad[i] = -act[i];
    }
    REQUIRE(a.send(1, Tag{Kind::kActivation, 0, mb, 0}, act).ok());
    REQUIRE(b.send(0, Tag{Kind::kGradient, 0, mb, 0}, grad).ok());
    auto got_act = b.recv(0, Tag{Kind::kActivation, 0, mb, 0}, deadline());
    auto got_grad = a.recv(1, Tag{Kind::kGradient, 0, mb, 0}, deadline());
    REQUIRE(got_act.ok());
    REQUIRE(got_grad.ok());
    CHECK(*got_act == act);
    CHECK(*got_grad == grad);
  }
  // Buffers were sized at start: a larger tensor is refused, not allocated for.
  auto too_large = a.send(1, Tag{Kind::kActivation, 1, 0, 0}, std::vector<float>(n + 1));
  REQUIRE_FALSE(too_large.ok());
  CHECK(too_large.error().code == Errc::kInvalidArgument);
  // Control messages go over the bootstrap transport, in order with the rest.
  REQUIRE(a.send(1, Tag{Kind::kControl, 0, 1, 0}, {1.0f, 2.0f}).ok());
  auto control = b.recv(0, Tag{Kind::kControl, 0, 1, 0}, deadline());
  REQUIRE(control.ok());
  CHECK(*control == std::vector<float>{1.0f, 2.0f});
  REQUIRE(a.flush().ok());
  CHECK(a.bytes_sent() >= 3 * n * sizeof(float));
  const TransferTotals timed = b.take_transfers(0);
  CHECK(timed.frames == 3);
  CHECK(timed.bytes == 3 * n * sizeof(float));
  CHECK(timed.tail_seconds > 0);
}
