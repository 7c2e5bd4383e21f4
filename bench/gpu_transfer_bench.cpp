// Host-staged transfer throughput of a GPU stage's activations over the tcp transport (issue 8),
// against a plain baseline measured in the same run on the same loopback connection:
//  - baseline: cudaMemcpy device-to-host into pageable memory, then send; the receiver copies
//    host-to-device with cudaMemcpy;
//  - contend: the cuda backend's forward (stage 0 of 2: its output copied to pinned memory on a
//    copy stream, the tensor completed on the transport's sending thread), the receiver's copy
//    through pinned staging as the next stage's copy_in does. Its time includes the stage's
//    forward and backward compute (1 layer, ffn 1x: a few percent at these sizes); the ratio is
//    conservative.
// Prints GB/s for both and the ratio. Run: build/default/bin/contend_bench_gpu_transfer (needs a
// CUDA device).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "contend/pipeline/transport/tcp_transport.h"
#include "contend/pipeline_cuda/cuda_backend.h"

using namespace contend;
using namespace contend::pipeline;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kMicrobatches = 16;
constexpr int kRounds = 4;  // x kMicrobatches tensors each

// Rank `rank` of two on loopback ports `port` and `port + 1`; exits on failure.
std::unique_ptr<Transport> connect_pair(int rank, int port) {
  TcpOptions o;
  o.rank = rank;
  o.world_size = 2;
  o.peers = {"127.0.0.1:" + std::to_string(port), "127.0.0.1:" + std::to_string(port + 1)};
  auto t = connect_tcp(o);
  if (!t) {
    std::fprintf(stderr, "rank %d: %s\n", rank, t.error().message.c_str());
    std::exit(1);
  }
  return std::move(*t);
}

// Rank 0 runs `send_side`, rank 1 receives every tensor and copies it to the device; returns
// GB/s from the first send to the last copy.
template <typename SendSide>
double measure(int port, std::size_t floats, SendSide send_side) {
  double seconds = 0;
  std::thread receiver([&] {
    auto t = connect_pair(1, port);
    float* dev = nullptr;
    float* pinned = nullptr;
    cudaMalloc(&dev, floats * sizeof(float));
    cudaMallocHost(&pinned, floats * sizeof(float));
    Clock::time_point first;
    for (int i = 0; i < kRounds * kMicrobatches; ++i) {
      auto got = t->recv(0, Tag{Kind::kActivation, i / kMicrobatches, i % kMicrobatches, 0},
                         Clock::now() + std::chrono::seconds(60));
      if (!got) {
        std::fprintf(stderr, "receiver: %s\n", got.error().message.c_str());
        std::exit(1);
      }
      if (i == 0) {
        first = Clock::now();
      }
      std::memcpy(pinned, got->data(), floats * sizeof(float));
      cudaMemcpy(dev, pinned, floats * sizeof(float), cudaMemcpyHostToDevice);
    }
    // The first tensor's time is setup: count the rest.
    seconds = std::chrono::duration<double>(Clock::now() - first).count();
    cudaFree(dev);
    cudaFreeHost(pinned);
  });
  auto t = connect_pair(0, port);
  send_side(*t);
  (void)t->flush();
  receiver.join();
  return static_cast<double>((kRounds * kMicrobatches - 1) * floats * sizeof(float)) / seconds / 1e9;
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  std::printf("%-10s %14s %14s %8s\n", "tensor", "baseline GB/s", "contend GB/s", "ratio");
  int port = 31000;
  for (int hidden : {1024, 4096}) {
    ModelConfig m;
    m.hidden = hidden;
    m.ffn_mult = 1;
    m.layers = 2;
    m.microbatch_size = 4;
    m.seq_len = 256;
    const std::size_t floats = m.activation_floats();
    float* dev = nullptr;
    cudaMalloc(&dev, floats * sizeof(float));
    cudaMemset(dev, 0, floats * sizeof(float));
    const double baseline = measure(port, floats, [&](Transport& t) {
      for (int i = 0; i < kRounds * kMicrobatches; ++i) {
        std::vector<float> out = t.buffer(floats);
        cudaMemcpy(out.data(), dev, floats * sizeof(float), cudaMemcpyDeviceToHost);
        (void)t.send(1, Tag{Kind::kActivation, i / kMicrobatches, i % kMicrobatches, 0}, std::move(out));
      }
    });
    port += 2;
    auto backend = contend::pipeline_cuda::make_cuda_backend(m, 0, 2, kMicrobatches, {"tf32", 0});
    if (!backend) {
      std::fprintf(stderr, "%s\n", backend.error().message.c_str());
      return 1;
    }
    const double ours = measure(port, floats, [&](Transport& t) {
      const std::vector<float> none, grad(floats, 0.0f);
      std::vector<float> ignored;
      for (int round = 0; round < kRounds; ++round) {
        for (int mb = 0; mb < kMicrobatches; ++mb) {
          std::vector<float> out = t.buffer(floats);
          (*backend)->forward(round, mb, none, out);
          (void)t.send(1, Tag{Kind::kActivation, round, mb, 0}, std::move(out), (*backend)->take_completion());
        }
        for (int mb = 0; mb < kMicrobatches; ++mb) {
          (*backend)->backward(round, mb, grad, ignored);  // frees the stash slot
        }
      }
    });
    port += 2;
    cudaFree(dev);
    std::printf("%-10s %14.2f %14.2f %8.2f\n", (std::to_string(floats * sizeof(float) >> 20) + " MiB").c_str(),
                baseline, ours, ours / baseline);
  }
  return 0;
}
