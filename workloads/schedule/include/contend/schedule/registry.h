#pragma once
// The name -> generator table of static schedules, in the spec grammar of common/spec.h:
// "1f1b", "gpipe", "kfkb:k=2" (or "kfkb:2"), "interleaved:v=2,group=8", "looped-bfs:v=2", "zb",
// "zbv", "dualpipev", "csv:PATH". Adding a schedule is a generator
// file plus one line in registry.cpp (docs/extending.md). Thread-safe (the table is immutable).

#include <string_view>
#include <vector>

#include "contend/common/result.h"
#include "contend/common/spec.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/schedule.h"

namespace contend::schedule {

// Every registered schedule (kind "schedule"), in the order `contend sim --help` lists them.
std::vector<const SpecEntry*> schedule_entries();

// Parses a schedule spec strictly against the table (common/spec.h's errors).
Result<Spec> parse_schedule(std::string_view text);

// The compute schedule that `spec` (from parse_schedule) names for `ranks` ranks and
// `microbatches` micro-batches. kInvalidArgument for ranks or microbatches < 1, or a shape the
// generator refuses (interleaved: m a multiple of p; dualpipev: m >= 2p; ...), quoting the spec.
// csv:PATH reads its file through `read` (empty: common's read_file, at most 64 MiB), the only
// I/O here, and comes back validated (csv_schedule in generators.h).
Result<Schedule> make_schedule(const Spec& spec, int ranks, int microbatches, const FileReader& read = {});
// parse_schedule, then make_schedule: for tests and tools that hold only the text.
Result<Schedule> make_schedule(std::string_view text, int ranks, int microbatches, const FileReader& read = {});

// The group size k a schedule runs with (1f1b: 1, kfkb:k=N: N, gpipe: m), for logs; 0 for schedules
// that do not group micro-batches that way.
int group_size(const Spec& spec, int microbatches);

// The specs policies choose between, made by the grammar's owner (no caller writes spec text):
// kfkb:k=K, with Adaptra's slack (kfkb:k=K,extra=E0/E1/...; all zeros: plain kfkb), and
// interleaved:v=V,group=G. Require k, v, group >= 1 within the registry's ranges.
Spec kfkb_spec(int k, const std::vector<int>& extra = {});
Spec interleaved_spec(int chunks, int group);
// zb with PipeMorph's adapted warm-up: zb:extra=E0/E1/... (all zeros: plain zb).
Spec zb_spec(const std::vector<int>& extra);
// kfkb_spec(k) for chunks 1, else interleaved_spec(chunks, k): the group a policy moves.
Spec grouped_spec(int chunks, int k);

}  // namespace contend::schedule
