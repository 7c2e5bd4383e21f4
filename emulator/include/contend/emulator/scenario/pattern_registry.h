#pragma once
// The kinds of timeline entry a scenario may use (docs/scenario-format.md): plain rate changes and
// flows, and the patterns that expand into them (periodic, random, ramp, trace, loop), in the one
// registry mechanism (common/registry.h): each item's entry is the entry's key ({"at": "2s",
// "<key>": ...}) and its help, its kind the expansion, defined in scenario/patterns/<key>.cpp.
// One line per kind in scenario/patterns/registry.cpp; the timeline looks an entry's kind up
// there. Thread-safe: the table is constant.

#include "contend/common/registry.h"
#include "contend/common/result.h"

namespace contend::emulator {

namespace detail {
class PatternCall;  // scenario/patterns/pattern.h: what an expansion is given
}

struct PatternKind {
  Result<void> (*expand)(detail::PatternCall& call) = nullptr;
};

using PatternItem = Registry<PatternKind>::Item;

// Every registered kind, in table order.
const Registry<PatternKind>& timeline_patterns();

}  // namespace contend::emulator
