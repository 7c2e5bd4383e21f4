// Simulation speed: simulated (lowered) actions per second for one iteration of a pipeline.
// Goal (issue 2): >= 5 million actions/s on one core, and a 64x1024 simulation under 1 s.
// Run: build/default/bin/contend_bench_sim
#include <benchmark/benchmark.h>

#include "contend/schedule/registry.h"
#include "contend/schedule/schedule.h"
#include "contend/sim/simulator.h"

namespace {

void run_sim(benchmark::State& state, const char* spec) {
  const int p = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const auto schedule = contend::schedule::lower(*contend::schedule::make_schedule(spec, p, m));
  contend::sim::LinkModel link;
  link.rate = contend::RateTrace::constant(10e9);
  link.latency_s = 50e-6;
  const auto config =
      contend::sim::uniform_config(schedule.num_stages, schedule.chunks_per_rank(), 0.010, 0.020, 16u << 20, link);
  std::size_t actions = 0;
  for (auto _ : state) {
    auto result = contend::sim::simulate(schedule, config);
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    actions += result->actions;
    benchmark::DoNotOptimize(result->makespan_s);
  }
  state.SetItemsProcessed(static_cast<int64_t>(actions));
  state.counters["actions"] = static_cast<double>(schedule.size());
}

void BM_Sim1F1B(benchmark::State& state) {
  run_sim(state, "1f1b");
}
void BM_SimKFKB4(benchmark::State& state) {
  run_sim(state, "kfkb:k=4");
}

}  // namespace

BENCHMARK(BM_Sim1F1B)->Name("sim/1f1b/p8_m64")->Args({8, 64})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Sim1F1B)->Name("sim/1f1b/p64_m1024")->Args({64, 1024})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimKFKB4)->Name("sim/kfkb4/p8_m64")->Args({8, 64})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimKFKB4)->Name("sim/kfkb4/p64_m1024")->Args({64, 1024})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
