#pragma once
// Each tenant's goodput in a cell, read back from its events log's flow_summary lines (the player
// writes one per background flow at the end): the other jobs' side of the contention, beside the
// pipeline's throughput. Private to the runner.

#include <vector>

#include "contend/common/json_reader.h"
#include "contend/common/result.h"
#include "contend/runner/results/tenant_goodput.h"
#include "nlohmann/json.hpp"

namespace contend::runner {

// The tenants of the events log at `events_path`, in the order their first flow is summarized.
// kNotFound when the file cannot be read, kParse naming its line when a line is not JSON or a
// summary's numbers are not numbers, kIo naming the tenant and flow when a flow failed (its
// traffic stopped early: the contention was not the scenario's).
Result<std::vector<TenantGoodput>> tenant_goodput(const std::string& events_path);

// cells.jsonl's "tenants": [{"tenant", "flows", "bps"}].
nlohmann::ordered_json tenants_json(const std::vector<TenantGoodput>& tenants);
// The same read back from `r` (an array): kParse naming the entry that is not one.
Result<std::vector<TenantGoodput>> read_tenants(const JsonReader& r);

}  // namespace contend::runner
