// Adaptive kFkB decision time: predict every k in 1..16 with the simulator for p=8, m=64 and
// choose (issue 6's goal: under 1 ms). The first decision also generates and lowers the 16
// schedules; later ones reuse them, as a running controller does.
// Run: build/default/bin/contend_bench_adaptive
#include <benchmark/benchmark.h>

#include "contend/pipeline/adaptive.h"

namespace {

contend::pipeline::Measurements measurements(double bps) {
  contend::pipeline::Measurements m;
  m.stages.assign(8, {0.010, 0.020, 4u << 20, 4u << 20});
  m.links.assign(7, {bps, 50e-6, 0});
  return m;
}

void BM_Decide(benchmark::State& state) {
  contend::pipeline::AdaptiveOptions o;
  o.k_max = 16;
  o.hysteresis = 0;
  contend::pipeline::AdaptiveController c(8, 64, o);
  int it = 0;
  for (auto _ : state) {
    // Alternate the bandwidth so every decision really re-evaluates and may switch.
    auto d = c.decide(it, measurements(it % 2 == 0 ? 1e9 : 10e9));
    benchmark::DoNotOptimize(d);
    ++it;
  }
}

}  // namespace

BENCHMARK(BM_Decide)->Name("adaptive/decide/p8_m64_k1-16")->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
