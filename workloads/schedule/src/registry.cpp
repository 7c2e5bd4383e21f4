#include "contend/schedule/registry.h"

#include <algorithm>
#include <functional>

#include "contend/common/registry.h"
#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

struct Generator {
  std::function<Result<Schedule>(const Spec& spec, int ranks, int microbatches)> make;
  std::function<int(const Spec& spec, int microbatches)> group;  // k, for logs
};

int k_of(const Spec& s) {
  return static_cast<int>(s.integer("k"));
}

// One line per schedule: its entry (name, help, parameters), how to make it, its group size.
const Registry<Generator>& table() {
  static const Registry<Generator> kTable("schedule", {
      {{"", "1f1b", "one forward, one backward (PipeDream-Flush); peak in-flight min(m, p-s)", {}},
       [](const Spec&, int p, int m) -> Result<Schedule> { return one_f_one_b(p, m); },
       [](const Spec&, int) { return 1; }},
      {{"", "kfkb", "k forwards then k backwards (Ada-Grouper); peak in-flight min(m, k(p-s))",
        {ParamDef::integer("k", "micro-batches per group", std::nullopt, 1)}},
       [](const Spec& s, int p, int m) -> Result<Schedule> { return kfkb(p, m, k_of(s)); },
       [](const Spec& s, int m) { return std::min(k_of(s), m); }},
      {{"", "gpipe", "all forwards, then all backwards; peak in-flight m", {}},
       [](const Spec&, int p, int m) -> Result<Schedule> { return gpipe(p, m); },
       [](const Spec&, int m) { return m; }},
      {{"", "interleaved", "Megatron interleaved 1F1B with v chunks per rank; m a multiple of p",
        {ParamDef::integer("v", "model chunks per rank", "2", 2, 64)}},
       [](const Spec& s, int p, int m) -> Result<Schedule> {
         const int v = static_cast<int>(s.integer("v"));
         if (auto ok = check_shape(p, m, v); !ok) {
           return ok.error();
         }
         return interleaved_1f1b(p, m, v);
       },
       [](const Spec&, int) { return 0; }},
  });
  return kTable;
}

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

Result<Schedule> make_schedule(const Spec& spec, int ranks, int microbatches) {
  const Generator* g = find(spec);
  CONTEND_CHECK(g != nullptr, "make_schedule: \"" + spec.str() + "\" is not a schedule spec");
  const std::string quoted = "schedule \"" + spec.str() + "\"";
  if (auto ok = check_shape(ranks, microbatches); !ok) {
    return with_context(ok.error(), quoted);
  }
  auto s = g->make(spec, ranks, microbatches);
  if (!s) {
    return with_context(s.error(), quoted);
  }
  return s;
}

Result<Schedule> make_schedule(std::string_view text, int ranks, int microbatches) {
  auto spec = parse_schedule(text);
  if (!spec) {
    return spec.error();
  }
  return make_schedule(*spec, ranks, microbatches);
}

int group_size(const Spec& spec, int microbatches) {
  const Generator* g = find(spec);
  return g == nullptr ? 0 : g->group(spec, microbatches);
}

}  // namespace contend::schedule
