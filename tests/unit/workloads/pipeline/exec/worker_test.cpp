#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <mutex>
#include <thread>
#include <utility>

#include <unistd.h>

#include "contend/common/fd.h"
#include "contend/pipeline/exec/worker.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"

using namespace contend;
using namespace contend::pipeline;

namespace {
RunConfig small(const std::string& schedule, int p = 4, int m = 8) {
  RunConfig c;
  c.workload.stages = p;
  c.workload.microbatches = m;
  c.workload.iterations = 1;
  c.schedule = parse_schedule_or_policy(schedule).value();
  c.workload.model.hidden = 16;
  c.workload.model.layers = 8;
  c.workload.model.microbatch_size = 2;
  c.workload.model.seq_len = 4;
  c.executor.timeout = std::chrono::milliseconds(10000);
  return c;
}

double max_relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  double scale = 1e-12;
  for (float v : b) {
    scale = std::max(scale, static_cast<double>(std::fabs(v)));
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
}
}  // namespace

TEST_CASE("every schedule's gradients and updated weights match a single-process reference", "[pipeline]") {
  for (const char* spec : {"1f1b", "kfkb:k=2", "kfkb:k=4", "gpipe"}) {
    for (const char* optimizer : {"sgd", "adam"}) {
      INFO(spec << " " << optimizer);
      RunConfig c = small(spec);
      c.workload.model.optimizer = optimizer;
      c.executor.optimizer_step = false;
      auto [reference, loss] = reference_iteration(c.workload.model, c.workload.stages, c.workload.microbatches, 0);
      std::mutex mutex;
      int checked = 0;
      auto run = run_in_process(c, [&](int rank, const StageBackends& backends) {
        REQUIRE(backends.size() == 1);
        ComputeBackend& backend = *backends.at(rank);
        const MlpStage* stage = cpu_stage(backend);
        std::lock_guard<std::mutex> lock(mutex);
        REQUIRE(stage != nullptr);
        REQUIRE(stage->num_layers() == 2);
        for (int l = 0; l < stage->num_layers(); ++l) {
          for (std::size_t j = 0; j < 4; ++j) {
            CHECK(max_relative_error(*stage->grads(l)[j], *reference[rank].grads(l)[j]) < 1e-5);
          }
        }
        backend.step();
        reference[rank].step();
        for (int l = 0; l < stage->num_layers(); ++l) {
          for (std::size_t j = 0; j < 4; ++j) {
            CHECK(max_relative_error(*stage->params(l)[j], *reference[rank].params(l)[j]) < 1e-5);
          }
        }
        if (rank == c.workload.stages - 1) {
          CHECK(backend.loss() == Approx(loss).epsilon(1e-6));
        }
        ++checked;
      });
      REQUIRE(run.ok());
      CHECK(checked == 4);
    }
  }
}

TEST_CASE("the loss decreases over 50 iterations", "[pipeline]") {
  RunConfig c = small("kfkb:k=2", 4, 4);
  c.workload.iterations = 50;
  c.workload.model.optimizer = "adam";
  c.workload.model.lr = 0.003;
  auto run = run_in_process(c);
  REQUIRE(run.ok());
  const auto& last = (*run)[3];
  REQUIRE(last.size() == 50);
  const double first5 = (last[0].loss + last[1].loss + last[2].loss + last[3].loss + last[4].loss) / 5;
  const double last5 = (last[45].loss + last[46].loss + last[47].loss + last[48].loss + last[49].loss) / 5;
  INFO("loss " << first5 << " -> " << last5);
  CHECK(last5 < 0.5 * first5);
  CHECK(std::isnan((*run)[0][0].loss));  // only the last stage knows the loss
}

TEST_CASE("peak activation memory per stage equals the schedule's prediction", "[pipeline]") {
  for (const char* spec : {"1f1b", "kfkb:k=2", "gpipe"}) {
    RunConfig c = small(spec);
    c.workload.backend = backends().parse("emulated").value();
    c.workload.emulated.activation_bytes = 1000;
    auto run = run_in_process(c);
    REQUIRE(run.ok());
    const auto predicted = schedule::peak_inflight(*schedule::make_schedule(spec, 4, 8));
    for (int r = 0; r < 4; ++r) {
      INFO(spec << " rank " << r);
      CHECK((*run)[r][0].peak_held_bytes == 1000u * static_cast<unsigned>(predicted[r]));
    }
  }
}

TEST_CASE("a rank that fails ends the others with an error naming the peer", "[pipeline]") {
  RunConfig c = small("1f1b");
  c.workload.backend = backends().parse("emulated").value();
  c.workload.iterations = 1;
  c.executor.timeout = std::chrono::milliseconds(300);
  InProcHub hub(4);
  hub.fail_rank(2, "rank 2 was killed");
  auto lowered = runtime_schedule(c);
  REQUIRE(lowered.ok());
  // Ranks 0 and 1 run; rank 1 gets its activations and then waits for a gradient from rank 2.
  std::vector<Result<IterationMetrics>> results(2, make_error(Errc::kInternal, "did not run"));
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto backends = make_rank_backends(c, lowered->lowered, r);
      auto transport = hub.transport(r);
      StageExecutor executor(lowered->lowered, r, backends->stages, *transport, c.executor);
      results[r] = executor.run_iteration(0);
      if (!results[r]) {
        hub.fail_rank(r, "rank " + std::to_string(r) + " failed");
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  REQUIRE_FALSE(results[1].ok());
  CHECK_THAT(results[1].error().message, Catch::StartsWith("rank 1, action ") && Catch::Contains("RECV_B") &&
                                             Catch::Contains("from rank 2: rank 2 was killed"));
  REQUIRE_FALSE(results[0].ok());
  CHECK_THAT(results[0].error().message, Catch::Contains("from rank 1: rank 1 failed"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("a rank's trace keeps its last whole iterations within the cap", "[pipeline]") {
  RunConfig c = small("1f1b", 2, 4);
  c.workload.backend = backends().parse("emulated").value();
  c.workload.emulated.forward = c.workload.emulated.backward = std::chrono::nanoseconds(0);
  c.executor.record_trace = true;
  c.executor.max_trace_events = 50;  // 1F1B over 2 ranks, 4 micro-batches: 16 actions a rank and iteration
  InProcHub hub(2);
  auto lowered = runtime_schedule(c);
  REQUIRE(lowered.ok());
  std::vector<std::size_t> kept(2);
  std::vector<int> from(2);
  std::vector<char> ran(2, 1);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto backends = make_rank_backends(c, lowered->lowered, r);
      auto transport = hub.transport(r);
      StageExecutor executor(lowered->lowered, r, backends->stages, *transport, c.executor);
      for (int it = 0; it < 10; ++it) {
        ran[r] = ran[r] && executor.run_iteration(it).ok();
      }
      kept[r] = executor.trace().size();
      from[r] = executor.trace_from();
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (int r = 0; r < 2; ++r) {
    REQUIRE(ran[r]);
    CHECK(kept[r] == 3 * lowered->lowered.ranks[r].size());  // three whole iterations fit in 50
    CHECK(from[r] == 7);
  }
}

TEST_CASE("a receive that never comes times out naming what it waited for", "[pipeline]") {
  RunConfig c = small("1f1b", 2, 2);
  c.workload.backend = backends().parse("emulated").value();
  c.executor.timeout = std::chrono::milliseconds(200);
  InProcHub hub(2);
  auto lowered = runtime_schedule(c);
  auto backends = make_rank_backends(c, lowered->lowered, 1);
  auto transport = hub.transport(1);
  StageExecutor executor(lowered->lowered, 1, backends->stages, *transport, c.executor);
  auto m = executor.run_iteration(0);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code == Errc::kTimeout);
  CHECK_THAT(m.error().message,
             Catch::Contains("rank 1, action 0 (1RECV_F0)") &&
                 Catch::Contains("waiting for activation of micro-batch 0 for stage 1 (iteration 0) from rank 0"));
}

TEST_CASE("emulated stages can take their durations and sizes from the cpu model's profile", "[pipeline]") {
  RunConfig c = small("1f1b", 2, 4);
  const auto [fwd, bwd] = profile_cpu_backend(c.workload.model, 0, 2, 3);
  CHECK(fwd.count() > 0);
  CHECK(bwd.count() > 0);
  c.workload.backend = backends().parse("emulated").value();
  c.profile = true;
  auto run = run_in_process(c);
  REQUIRE(run.ok());
  // Rank 0 of 1F1B on 2 stages holds 2 activations of tokens x hidden floats.
  CHECK((*run)[0][0].peak_held_bytes == 2u * c.workload.model.activation_floats() * sizeof(float));
  CHECK((*run)[0][0].bytes_sent == 4u * c.workload.model.activation_floats() * sizeof(float));
}

TEST_CASE("the runtime refuses what it cannot run, saying why", "[pipeline]") {
  RunConfig c = small("interleaved:v=4");  // 16 stages of an 8-layer model
  CHECK_THAT(runtime_schedule(c).error().message, Catch::Contains("cannot fill 16 stages"));
  c = small("1f1b");
  c.workload.model.layers = 2;
  CHECK_THAT(runtime_schedule(c).error().message, Catch::Contains("cannot fill 4 stages"));
  c = small("1f1b");
  c.workload.model.optimizer = "lion";
  CHECK_THAT(runtime_schedule(c).error().message, Catch::Contains("optimizer must be sgd or adam"));
  const auto k_of = [](const char* text) { return schedule::group_size(*schedule::parse_schedule(text), 8); };
  CHECK(k_of("kfkb:k=3") == 3);
  CHECK(k_of("kfkb:3") == 3);  // the shorthand logs its k too
  CHECK(k_of("gpipe") == 8);
  CHECK(k_of("1f1b") == 1);
}

namespace {
// A backend whose outputs finish after forward/backward return, as the cuda backend's do: `out`
// holds garbage until the completion (run by the transport's sending thread) fills it in.
class Deferred : public ComputeBackend {
 public:
  Deferred(std::unique_ptr<ComputeBackend> inner, std::atomic<int>& completed)
      : inner_(std::move(inner)), completed_(completed) {}
  std::size_t message_floats() const override { return inner_->message_floats(); }
  void forward(int iteration, int mb, const std::vector<float>& in, std::vector<float>& out) override {
    std::vector<float> real;
    inner_->forward(iteration, mb, in, real);
    defer(std::move(real), out);
  }
  void backward(int iteration, int mb, const std::vector<float>& grad_out, std::vector<float>& grad_in) override {
    std::vector<float> real;
    inner_->backward(iteration, mb, grad_out, real);
    defer(std::move(real), grad_in);
  }
  void step() override { inner_->step(); }
  double loss() const override { return inner_->loss(); }
  std::uint64_t held_bytes() const override { return inner_->held_bytes(); }
  Completion take_completion() override { return std::exchange(pending_, {}); }

 private:
  void defer(std::vector<float> real, std::vector<float>& out) {
    out.assign(message_floats(), std::nanf(""));
    pending_ = [real = std::move(real), this](std::vector<float>& o) {
      o = real;
      ++completed_;
    };
  }
  std::unique_ptr<ComputeBackend> inner_;
  std::atomic<int>& completed_;
  Completion pending_;
};
}  // namespace

TEST_CASE("tensors completed on the sending thread train as complete ones, in process and over TCP", "[pipeline]") {
  RunConfig c = small("kfkb:k=2", 2, 4);
  c.workload.iterations = 2;
  auto plain = run_in_process(c);
  REQUIRE(plain.ok());
  const double want = (*plain)[1][1].loss;
  const int base = 21000 + static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 20000);
  for (const bool tcp : {false, true}) {
    INFO((tcp ? "tcp" : "in-process"));
    InProcHub hub(2);
    std::atomic<int> completed{0};
    std::vector<double> loss(2);
    std::vector<std::string> errors(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        auto inner = make_rank_backends(c, runtime_schedule(c)->lowered, r);
        Deferred backend(std::move(inner->owned.front()), completed);
        std::unique_ptr<Transport> transport;
        if (tcp) {
          TcpOptions o;
          o.rank = r;
          o.world_size = 2;
          o.peers = {"127.0.0.1:" + std::to_string(base), "127.0.0.1:" + std::to_string(base + 1)};
          auto t = connect_tcp(o);
          if (!t) {
            errors[r] = t.error().message;
            return;
          }
          transport = std::move(*t);
        } else {
          transport = hub.transport(r);
        }
        auto ok = run_rank(
            c, runtime_schedule(c).value(), r, StageBackends{{r, &backend}}, *transport,
            [&](const IterationMetrics& m) { loss[r] = m.loss; }, nullptr);
        if (!ok) {
          errors[r] = ok.error().message;
        }
      });
    }
    for (auto& t : threads) {
      t.join();
    }
    CHECK(errors == std::vector<std::string>{"", ""});
    CHECK(loss[1] == want);
    // Every activation and gradient sent went through its completion: 4 each way, 2 iterations.
    CHECK(completed.load() == 2 * 2 * 4);
  }
}

TEST_CASE("an interleaved pipeline (two chunks per rank, the last rank sending to the first) trains as 1F1B does",
          "[pipeline]") {
  RunConfig one = small("1f1b");
  one.workload.iterations = 3;
  RunConfig two = small("interleaved:v=2");
  two.workload.iterations = 3;
  auto a = run_in_process(one);
  auto b = run_in_process(two);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (int it = 0; it < 3; ++it) {
    INFO("iteration " << it);
    // The same model split into 8 stages instead of 4: same layers, same micro-batch order.
    CHECK((*b)[3][it].loss == (*a)[3][it].loss);
    CHECK((*b)[0][it].forwards == 2 * 8);  // two chunks of 8 micro-batches
  }
}

TEST_CASE("every schedule of the zoo trains the model 1F1B trains, to the same losses, over 4 ranks", "[pipeline]") {
  RunConfig base = small("1f1b");
  base.workload.iterations = 3;
  auto reference = run_in_process(base);
  REQUIRE(reference.ok());
  for (const char* spec : {"kfkb:k=2", "gpipe", "interleaved:v=2", "interleaved:v=2,group=8", "looped-bfs:v=2", "zb",
                           "zb:v=2", "zbv", "dualpipev", "slack:2/2/0/0", "kfkb:k=2,extra=1/1/0/0"}) {
    INFO(spec);
    RunConfig c = base;
    c.schedule = parse_schedule_or_policy(spec).value();
    auto run = run_in_process(c);
    REQUIRE(run.ok());
    // The rank of the last stage, which reports the loss: 3 when looped, 0 in V placement.
    const auto made = schedule::make_schedule(c.schedule, 4, 8);
    const int last = made->rank_of(made->num_stages - 1);
    for (int it = 0; it < 3; ++it) {
      const double want = (*reference)[3][it].loss;
      const double got = (*run)[last][it].loss;
      CHECK(std::abs(got - want) <= 1e-6 * std::abs(want));
    }
  }
}

TEST_CASE("a PyTorch-format CSV written by hand runs and trains as the built-in schedule does", "[pipeline]") {
  // Interleaved 1F1B on 2 ranks with 2 chunks (stages 0..3) and 4 micro-batches, as PyTorch's
  // _dump_csv writes it: one row per rank, compute actions only.
  const std::string path = "/tmp/contend-hand-" + std::to_string(::getpid()) + ".csv";
  REQUIRE(write_file_atomic(path,
                            "0F0,0F1,2F0,2F1,0F2,2B0,0F3,2B1,2F2,0B0,2F3,0B1,2B2,0B2,2B3,0B3\n"
                            "1F0,1F1,3F0,3B0,3F1,3B1,1B0,1F2,1B1,1F3,3F2,3B2,3F3,3B3,1B2,1B3\n")
              .ok());
  RunConfig built_in = small("interleaved:v=2", 2, 4);
  built_in.workload.iterations = 2;
  RunConfig from_csv = built_in;
  from_csv.schedule = parse_schedule_or_policy("csv:" + path).value();
  auto a = run_in_process(built_in);
  auto b = run_in_process(from_csv);
  ::unlink(path.c_str());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (int it = 0; it < 2; ++it) {
    CHECK((*b)[1][it].loss == Approx((*a)[1][it].loss).epsilon(1e-6));
  }
}
