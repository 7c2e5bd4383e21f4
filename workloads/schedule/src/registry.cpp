#include "contend/schedule/registry.h"

#include <algorithm>
#include <functional>

#include "contend/common/registry.h"
#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

struct Generator {
  std::function<Result<Schedule>(const Spec& spec, int ranks, int microbatches, const FileReader& read)> make;
  std::function<int(const Spec& spec, int microbatches)> group;  // k, for logs
};

int k_of(const Spec& s) {
  return static_cast<int>(s.integer("k"));
}
int v_of(const Spec& s) {
  return static_cast<int>(s.integer("v"));
}
ParamDef chunks_param(const char* fallback, int min) {
  return ParamDef::integer("v", "model chunks per rank", fallback, min, 64);
}
// Megatron's microbatch_group_size_per_vp_stage; 0 (not written) stands for its default, p.
ParamDef group_param() {
  return ParamDef::integer("group",
                           "micro-batches per chunk visit (Megatron's microbatch_group_size_per_vp_stage); "
                           "default p",
                           "0", 1, kMaxMicrobatches);
}
// Adaptra's slackness: extra warm-up forwards per stage, one entry per rank ("0/2/1/0").
ParamDef extra_param(std::optional<std::string> fallback) {
  return ParamDef::integer_list("extra", "extra warm-up forwards per stage, one entry per rank: 0/2/1/0", fallback, 0,
                                kMaxMicrobatches, kMaxRanks);
}
std::vector<int> extra_of(const Spec& s) {
  const auto& list = s.integers("extra");
  return {list.begin(), list.end()};
}
int none(const Spec&, int) {
  return 0;
}

// The schedule `make` builds once the chunks fit contend's limits (check_shape).
template <typename Make>
Result<Schedule> with_chunks(int p, int m, int chunks, Make make) {
  if (auto ok = check_shape(p, m, chunks); !ok) {
    return ok.error();
  }
  return make();
}

// One line per schedule: its entry (name, help, parameters), how to make it, its group size.
// Not clang-formatted: it would spread an entry over many lines and the table would stop reading
// as one line per schedule.
// clang-format off
const Registry<Generator>& table() {
  using R = Result<Schedule>;
  using F = const FileReader&;
  static const Registry<Generator> kTable("schedule", {
      {{"", "1f1b", "one forward, one backward (PipeDream-Flush); peak in-flight min(m, p-s)", {}},
       [](const Spec&, int p, int m, F) -> R { return one_f_one_b(p, m); },
       [](const Spec&, int) { return 1; }},
      {{"", "kfkb", "k forwards then k backwards (Ada-Grouper); peak in-flight min(m, k(p-s) + extra_s)",
        {ParamDef::integer("k", "micro-batches per group", std::nullopt, 1), extra_param("")}},
       [](const Spec& s, int p, int m, F) -> R { return slack(p, m, k_of(s), extra_of(s)); },
       [](const Spec& s, int m) { return std::min(k_of(s), m); }},
      {{"", "slack", "1F1B with extra warm-up forwards per stage (Adaptra's slackness); peak in-flight "
        "min(m, p-s + extra_s)", {extra_param(std::nullopt)}},
       [](const Spec& s, int p, int m, F) -> R { return slack(p, m, 1, extra_of(s)); },
       [](const Spec&, int) { return 1; }},
      {{"", "gpipe", "all forwards, then all backwards; peak in-flight m", {}},
       [](const Spec&, int p, int m, F) -> R { return gpipe(p, m); },
       [](const Spec&, int m) { return m; }},
      {{"", "interleaved", "Megatron interleaved 1F1B (PyTorch Interleaved1F1B) with v chunks per rank",
        {chunks_param("2", 2), group_param()}},
       [](const Spec& s, int p, int m, F) -> R {
         const int group = s.given("group") ? static_cast<int>(s.integer("group")) : 0;
         return with_chunks(p, m, v_of(s), [&] { return interleaved_1f1b(p, m, v_of(s), group); });
       },
       none},
      {{"", "looped-bfs", "breadth-first, chunk after chunk (PyTorch LoopedBFS); peak in-flight m*v",
        {chunks_param("2", 1)}},
       [](const Spec& s, int p, int m, F) -> R {
         return with_chunks(p, m, v_of(s), [&]() -> R { return looped_bfs(p, m, v_of(s)); });
       },
       none},
      {{"", "zb", "zero bubble (ZB-H1 at v=1), I/W split, v chunks looped (PyTorch InterleavedZeroBubble); with "
        "extra, v=1's warm-up adapted (PipeMorph)", {chunks_param("1", 1), extra_param("")}},
       [](const Spec& s, int p, int m, F) -> R {
         return with_chunks(p, m, v_of(s), [&] { return interleaved_zero_bubble(p, m, v_of(s), extra_of(s)); });
       },
       none},
      {{"", "zbv", "zero bubble V: 2 chunks per rank in V placement, I/W split (PyTorch ZBVZeroBubble)", {}},
       [](const Spec&, int p, int m, F) -> R { return with_chunks(p, m, 2, [&]() -> R { return zbv(p, m); }); },
       none},
      {{"", "dualpipev", "DualPipe in a V: 2 chunks per rank in V placement; m >= 2p (PyTorch DualPipeV)", {}},
       [](const Spec&, int p, int m, F) -> R { return with_chunks(p, m, 2, [&] { return dualpipev(p, m); }); },
       none},
      {{"", "csv", "a per-rank action table in PyTorch's CSV format (F, B, I, W; SEND/RECV optional)",
        {ParamDef::path("path", "the CSV file: one row per rank, one action per cell")}},
       [](const Spec& s, int p, int m, F read) -> R { return csv_schedule(s.text("path"), p, m, read); },
       none},
  });
  return kTable;
}
// clang-format on

const Generator* find(const Spec& spec) {
  const auto* item = table().find(spec);
  return item == nullptr ? nullptr : &item->kind;
}

}  // namespace

std::vector<const SpecEntry*> schedule_entries() {
  return table().entries();
}

Result<Spec> parse_schedule(std::string_view text) {
  return table().parse(text);
}

Result<Schedule> make_schedule(const Spec& spec, int ranks, int microbatches, const FileReader& read) {
  const Generator* g = find(spec);
  CONTEND_CHECK(g != nullptr, "make_schedule: \"" + spec.str() + "\" is not a schedule spec");
  const std::string quoted = "schedule \"" + spec.str() + "\"";
  if (auto ok = check_shape(ranks, microbatches); !ok) {
    return with_context(ok.error(), quoted);
  }
  auto s = g->make(spec, ranks, microbatches, read);
  if (!s) {
    return with_context(s.error(), quoted);
  }
  return s;
}

Result<Schedule> make_schedule(std::string_view text, int ranks, int microbatches, const FileReader& read) {
  auto spec = parse_schedule(text);
  if (!spec) {
    return spec.error();
  }
  return make_schedule(*spec, ranks, microbatches, read);
}

int group_size(const Spec& spec, int microbatches) {
  const Generator* g = find(spec);
  return g == nullptr ? 0 : g->group(spec, microbatches);
}

Spec kfkb_spec(int k, const std::vector<int>& extra) {
  auto spec = parse_schedule(slack_name(k, extra));
  CONTEND_CHECK(spec.ok(), "kfkb_spec: " + (spec.ok() ? std::string() : spec.error().message));
  return *spec;
}

Spec interleaved_spec(int chunks, int group) {
  auto spec = parse_schedule("interleaved:v=" + std::to_string(chunks) + ",group=" + std::to_string(group));
  CONTEND_CHECK(spec.ok(), "interleaved_spec: " + (spec.ok() ? std::string() : spec.error().message));
  return *spec;
}

Spec zb_spec(const std::vector<int>& extra) {
  const bool zeros = std::all_of(extra.begin(), extra.end(), [](int e) { return e == 0; });
  auto spec = parse_schedule(zeros ? std::string("zb") : "zb:extra=" + list_text(extra));
  CONTEND_CHECK(spec.ok(), "zb_spec: " + (spec.ok() ? std::string() : spec.error().message));
  return *spec;
}

Spec grouped_spec(int chunks, int k) {
  return chunks <= 1 ? kfkb_spec(k) : interleaved_spec(chunks, k);
}

}  // namespace contend::schedule
