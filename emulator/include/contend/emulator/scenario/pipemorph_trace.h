#pragma once
// PipeMorph's straggler traces, read as they are (the artifact's slowlinks.trace and
// large-scale.trace): one line per change, `ITERATION;LINKS;DELAY_S`, LINKS a comma-separated list
// of stage pairs `i_j`, DELAY_S seconds; from that iteration (0-based, as PipeMorph's injector
// counts completed iterations) every listed link stalls by the delay until a later line names it
// again (0.00 ends it). Pure; thread-safe.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contend/common/result.h"

namespace contend::emulator {

struct PipeMorphChange {
  int iteration = 0;
  std::vector<std::pair<int, int>> links;  // stage pairs, as written
  double delay_s = 0;
};

// Parses a trace of at most kMaxTracePoints lines ('#' comments and blank lines ignored).
// Iterations must not decrease. A NIC crash (`inf`) is refused: it is no stall but a lost link.
// Errors are kParse "<source>:<line>: <what was expected>", never quoting the file.
Result<std::vector<PipeMorphChange>> parse_pipemorph_trace(std::string_view text, const std::string& source);

}  // namespace contend::emulator
