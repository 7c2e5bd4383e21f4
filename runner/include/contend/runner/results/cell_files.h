#pragma once
// Where one cell's files go in a results folder (docs/experiment-format.md, "The results folder"):
// what its processes write and the runner reads back. Plain values.

#include <string>

namespace contend::runner {

struct CellFiles {
  std::string metrics;       // every rank's contend.iteration/1 lines
  std::string events;        // the player's contend.events/1 log
  std::string log;           // the workers' stdout and stderr
  std::string trace_prefix;  // when set, rank r writes its Chrome trace to PREFIX.rankR.json
  std::string truth{};       // a policy that reads the truth: its scenario's contend.truth/1 file
};

}  // namespace contend::runner
