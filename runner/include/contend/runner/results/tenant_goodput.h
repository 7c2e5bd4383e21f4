#pragma once
// What another tenant's traffic got in a cell: cells.jsonl's and summary.json's "tenants" entries.
// A tenant is a traffic pattern's flows (named "<tenant>:<from>-<to>", docs/scenario-format.md
// #traffic-patterns) or a flow of its own (its name).

#include <string>

namespace contend::runner {

struct TenantGoodput {
  std::string tenant;
  int flows = 0;
  double bps = 0;  // the sum of its flows' goodputs, each over the time it was on
};

}  // namespace contend::runner
