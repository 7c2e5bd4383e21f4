#include <catch2/catch.hpp>
#include <cmath>

#include "contend/pipeline/worker.h"
#include "contend/pipeline_cuda/cuda_backend.h"

using namespace contend;
using namespace contend::pipeline;

namespace {
ModelConfig model(const std::string& optimizer) {
  ModelConfig m;
  m.hidden = 64;
  m.layers = 4;
  m.microbatch_size = 2;
  m.seq_len = 8;
  m.optimizer = optimizer;
  m.lr = optimizer == "adam" ? 0.003 : 0.05;
  return m;
}

double max_rel(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double scale = 1e-12;
  double worst = 0;
  for (float v : b) {
    scale = std::max(scale, static_cast<double>(std::fabs(v)));
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
}
}  // namespace

TEST_CASE("the cuda backend's gradients and updated weights match the cpu backend's in fp32", "[gpu]") {
  for (const char* optimizer : {"sgd", "adam"}) {
    INFO(optimizer);
    const ModelConfig m = model(optimizer);
    // Two stages: the first (synthetic input, sends activations) and the last (loss).
    for (int stage : {0, 1}) {
      INFO("stage " << stage);
      auto cpu = make_cpu_backend(m, stage, 2, 4);
      auto gpu = contend::pipeline_cuda::make_cuda_backend(m, stage, 2, 4, {});
      REQUIRE(gpu.ok());
      std::vector<float> in(cpu->message_floats(), 0.25f), out_c, out_g, gin_c, gin_g;
      for (int mb = 0; mb < 4; ++mb) {
        cpu->forward(0, mb, in, out_c);
        (*gpu)->forward(0, mb, in, out_g);
        if (auto complete = (*gpu)->take_completion()) {
          complete(out_g);  // the output's copy to the host finishes here
        }
        if (stage == 0) {  // the last stage sends no activation (its loss is checked below)
          CHECK(max_rel(out_g, out_c) < 1e-5);
        }
      }
      const std::vector<float> dy(cpu->message_floats(), 0.01f);
      for (int mb = 0; mb < 4; ++mb) {
        cpu->backward(0, mb, dy, gin_c);
        (*gpu)->backward(0, mb, dy, gin_g);
        if (auto complete = (*gpu)->take_completion()) {
          complete(gin_g);
        }
        if (stage == 1) {
          CHECK(max_rel(gin_g, gin_c) < 1e-4);
        }
      }
      const MlpStage* ref = cpu_stage(*cpu);
      for (int l = 0; l < ref->num_layers(); ++l) {
        const auto g = contend::pipeline_cuda::cuda_grads(**gpu, l);
        const auto rg = ref->grads(l);
        for (int j = 0; j < 4; ++j) {
          CHECK(max_rel(g[j], *rg[j]) < 1e-4);
        }
      }
      cpu->step();
      (*gpu)->step();
      if (stage == 1) {
        CHECK((*gpu)->loss() == Approx(cpu->loss()).epsilon(1e-5));
      }
      for (int l = 0; l < ref->num_layers(); ++l) {
        const auto p = contend::pipeline_cuda::cuda_params(**gpu, l);
        const auto rp = ref->params(l);
        for (int j = 0; j < 4; ++j) {
          CHECK(max_rel(p[j], *rp[j]) < 1e-5);
        }
      }
      CHECK(contend::pipeline_cuda::cuda_arena_bytes(**gpu) > 0);
    }
  }
}

TEST_CASE("a 4-stage pipeline of cuda stages trains as the cpu pipeline does", "[gpu]") {
  contend::pipeline_cuda::register_cuda_backend();
  for (const char* schedule : {"1f1b", "kfkb:k=2"}) {
    INFO(schedule);
    RunConfig c;
    c.world_size = 4;
    c.microbatches = 8;
    c.iterations = 3;
    c.schedule = contend::pipeline::parse_schedule_or_policy(schedule).value();
    c.model = model("sgd");
    c.model.layers = 8;
    auto cpu = run_in_process(c);
    c.backend = contend::pipeline::backends().parse("cuda").value();
    auto gpu = run_in_process(c);
    REQUIRE(cpu.ok());
    REQUIRE(gpu.ok());
    for (int it = 0; it < 3; ++it) {
      CHECK((*gpu)[3][it].loss == Approx((*cpu)[3][it].loss).epsilon(1e-4));
    }
  }
}

TEST_CASE("the cuda backend refuses a math mode it does not know", "[gpu]") {
  contend::pipeline_cuda::CudaOptions o;
  o.math = "fp8";
  CHECK_THAT(contend::pipeline_cuda::make_cuda_backend(model("sgd"), 0, 2, 4, o).error().message,
             Catch::Contains("fp32, tf32 or bf16"));
}
