// The cuda backend's device-memory plan and launch geometry: pure arithmetic, checked on a CPU.
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <vector>

#include "contend/pipeline_cuda/arena_layout.h"
#include "contend/pipeline_cuda/launch_geometry.h"

using namespace contend;
using namespace contend::pipeline_cuda;

namespace {

std::vector<Span> device_spans(const ArenaLayout& a) {
  std::vector<Span> all{a.params, a.grads, a.adam_m, a.adam_v, a.in, a.cur, a.grad, a.target, a.relu, a.dact, a.loss};
  all.insert(all.end(), a.stash.begin(), a.stash.end());
  all.insert(all.end(), a.out.begin(), a.out.end());
  return all;
}

// Every span aligned, none overlapping another, all inside `total`.
void check_spans(std::vector<Span> spans, std::size_t total) {
  for (const Span& s : spans) {
    CHECK(s.offset % kArenaAlignment == 0);
  }
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) { return x.offset < y.offset; });
  for (std::size_t i = 0; i + 1 < spans.size(); ++i) {
    CHECK(spans[i].offset + spans[i].bytes <= spans[i + 1].offset);
  }
  CHECK(spans.back().offset + spans.back().bytes <= total);
}

}  // namespace

TEST_CASE("every carve-out of a cuda stage's arena starts on a 256-byte boundary and none overlap", "[cuda]") {
  // Odd sizes put every buffer after the first off a 256-byte boundary unless padded.
  for (const StageShape shape : {StageShape{3, 5, 20, 1, 1, false}, StageShape{7, 33, 99, 3, 5, true},
                                 StageShape{16, 64, 256, 4, 4, true}, StageShape{1, 1, 1, 1, 1, true}}) {
    INFO("T " << shape.tokens << ", h " << shape.hidden << ", f " << shape.ffn << ", last " << shape.last);
    auto a = plan_arena(shape);
    REQUIRE(a.ok());
    CHECK(a->stash.size() == shape.microbatches);
    CHECK(a->out.size() == 2 * shape.microbatches);
    CHECK(a->pinned_out.size() == 2 * shape.microbatches);
    CHECK(a->loss.bytes == sizeof(double));
    CHECK(a->loss.offset % alignof(double) == 0);  // what atomicAdd on a double needs
    check_spans(device_spans(*a), a->arena_bytes);
    std::vector<Span> pinned{a->pinned_in};
    pinned.insert(pinned.end(), a->pinned_out.begin(), a->pinned_out.end());
    check_spans(pinned, a->pinned_bytes);
  }
}

TEST_CASE("a stage's buffers have the sizes its kernels index", "[cuda]") {
  const StageShape shape{7, 33, 99, 3, 5, true};
  auto a = plan_arena(shape);
  REQUIRE(a.ok());
  CHECK(a->params_per_layer == 2 * 33 * 99 + 99 + 33);
  CHECK(a->parameters == 3 * a->params_per_layer);
  CHECK(a->params.bytes == a->parameters * sizeof(float));
  CHECK(a->stash_floats == 3 * 7 * (33 + 99) + 7 * 33);  // the last stage keeps its loss gradient too
  CHECK(a->stash[0].bytes == a->stash_floats * sizeof(float));
  CHECK(a->relu.bytes == 7 * 99 * sizeof(float));
  CHECK(a->out[0].bytes == 7 * 33 * sizeof(float));
  auto not_last = plan_arena(StageShape{7, 33, 99, 3, 5, false});
  REQUIRE(not_last.ok());
  CHECK(not_last->stash_floats == 3 * 7 * (33 + 99));
}

TEST_CASE("hidden 8192 with 4 layers per stage counts its parameters past INT_MAX without overflow", "[cuda]") {
  // The case that overflowed `static_cast<int>(P_ * layers_)`.
  const StageShape shape{4096, 8192, 4 * 8192, 4, 8, true};
  auto a = plan_arena(shape);
  REQUIRE(a.ok());
  CHECK(a->parameters == 2'147'647'488ull);
  CHECK(a->parameters > static_cast<std::size_t>(INT_MAX));
  CHECK(a->params.bytes == 2'147'647'488ull * 4);
  CHECK(a->arena_bytes > 4 * a->params.bytes);
  check_spans(device_spans(*a), a->arena_bytes);
}

TEST_CASE("an arena that does not fit in size_t is refused, naming what overflowed", "[cuda]") {
  const std::size_t huge = std::size_t{1} << 40;
  auto a = plan_arena(StageShape{huge, huge, huge, 1, 1, false});
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().code == Errc::kInvalidArgument);
  CHECK_THAT(a.error().message, Catch::Contains("overflows") && Catch::Contains("cuda stage"));
  // Fits per buffer, not all together: the carving itself overflows.
  auto b = plan_arena(StageShape{1, std::size_t{1} << 29, std::size_t{1} << 29, 4, 1, false});
  REQUIRE_FALSE(b.ok());
  CHECK_THAT(b.error().message, Catch::Contains("overflows"));
}

TEST_CASE("a stage with a zero size is refused", "[cuda]") {
  CHECK(plan_arena(StageShape{0, 64, 256, 1, 1, false}).error().code == Errc::kInvalidArgument);
  CHECK(plan_arena(StageShape{16, 64, 256, 1, 0, false}).error().code == Errc::kInvalidArgument);
}

TEST_CASE("checked_mul names what overflowed", "[cuda]") {
  CHECK(*checked_mul(1u << 20, 1u << 20, "x") == std::size_t{1} << 40);
  auto r = checked_mul(SIZE_MAX / 2 + 1, 2, "the gemm's C");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::StartsWith("the gemm's C overflows"));
}

TEST_CASE("kernel grids cover any element count with at most kMaxBlocks blocks", "[cuda]") {
  CHECK(grid_blocks(0) == 1);
  CHECK(grid_blocks(1) == 1);
  CHECK(grid_blocks(kThreads) == 1);
  CHECK(grid_blocks(kThreads + 1) == 2);
  // 2^31 + 1 elements: an int count would be negative; the grid is capped and the kernels stride.
  const std::size_t big = (std::size_t{1} << 31) + 1;
  CHECK(grid_blocks(big) == kMaxBlocks);
  CHECK(grid_blocks(SIZE_MAX) == kMaxBlocks);
}
