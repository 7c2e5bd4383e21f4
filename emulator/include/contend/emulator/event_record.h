#pragma once
// An event as the events log (contend.events/1, docs/scenario-format.md, "The event log") writes it:
// its kind, when it was scheduled, what it does, the timeline entry that made it. The player adds
// when it applied it and how that went; a simulated cell writes it as scheduled. One writer for
// every kind, so the log, the report and the docs name and shape each alike. Pure; thread-safe.

#include <nlohmann/json.hpp>

#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

// "kind" (the kind's kName), "scheduled_s", the kind's own fields (its fields(): a rate's "link"
// and "rate_bps", a stall's "link", "stall_s" and "iteration" when indexed by one, a flow's "flow",
// "from", "to", "protocol", "streams", "rate_bps"), last "origin".
nlohmann::ordered_json event_record(const Event& e);

}  // namespace contend::emulator
