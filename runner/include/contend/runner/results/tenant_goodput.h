#pragma once
// What another tenant's traffic got in a cell: cells.jsonl's and summary.json's "tenants" entries.
// A tenant is a traffic pattern's flows (named "<tenant>:<from>-<to>", docs/scenario-format.md
// #traffic-patterns) or a flow of its own (its name); a closed-loop one also has its iterations.

#include <string>

namespace contend::runner {

struct TenantGoodput {
  std::string tenant;
  int flows = 0;
  double bps = 0;  // the sum of its flows' goodputs, each over the time it was on
  // A closed-loop job's (its flows "iterate", docs/scenario-format.md#closed-loop-traffic): the
  // iterations it ended in the cell and their median time, compute and communication; 0 for streams.
  int iterations = 0;
  double iteration_s = 0;
};

}  // namespace contend::runner
