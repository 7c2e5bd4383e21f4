#pragma once
// The kinds of timeline entry a scenario may use (docs/scenario-format.md): plain rate changes and
// flows, and the patterns that expand into them (periodic, random, ramp, trace, loop). One table,
// patterns/registry.cpp, holds a line per kind naming its file's expansion; the timeline looks the
// entry's kind up there. Thread-safe: the table is constant.

#include <string_view>
#include <vector>

namespace contend::emulator {

struct PatternInfo {
  std::string_view key;   // the entry's member that holds it: {"at": "2s", "<key>": ...}
  std::string_view help;  // one line; docs/scenario-format.md's row says it too
};

// Every registered kind, in table order.
const std::vector<PatternInfo>& timeline_patterns();

}  // namespace contend::emulator
