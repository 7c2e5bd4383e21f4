// The one table of timeline entry kinds: a line each, naming the file that expands it. The order
// is the order error messages list them in. docs/extending.md says how to add one;
// tests/unit/registry_docs_test.cpp fails when this table and docs/scenario-format.md disagree.

#include "scenario/patterns/pattern.h"

namespace contend::emulator::detail {

// Each expansion is defined in its own file, patterns/<key>.cpp.
Result<void> expand_rate(PatternCall& call);
Result<void> expand_flow(PatternCall& call);
Result<void> expand_periodic(PatternCall& call);
Result<void> expand_random(PatternCall& call);
Result<void> expand_ramp(PatternCall& call);
Result<void> expand_trace(PatternCall& call);
Result<void> expand_loop(PatternCall& call);

const std::vector<PatternEntry>& pattern_table() {
  // {key, help}, expansion
  static const std::vector<PatternEntry> kTable = {
      {{"rate", "the link's rate from then on"}, expand_rate},
      {{"flow", "a background flow from then on, for its duration"}, expand_flow},
      {{"periodic", "the effect for `on` of every `period`"}, expand_periodic},
      {{"random", "episodes at Poisson times, of fixed or exponential length"}, expand_random},
      {{"ramp", "equal steps from one rate to another"}, expand_ramp},
      {{"trace", "a rate change per point of a bandwidth trace"}, expand_trace},
      {{"loop", "inner entries repeated every `every`"}, expand_loop},
  };
  return kTable;
}

}  // namespace contend::emulator::detail

namespace contend::emulator {

const std::vector<PatternInfo>& timeline_patterns() {
  static const std::vector<PatternInfo> kInfos = [] {
    std::vector<PatternInfo> out;
    for (const detail::PatternEntry& e : detail::pattern_table()) {
      out.push_back(e.info);
    }
    return out;
  }();
  return kInfos;
}

}  // namespace contend::emulator
