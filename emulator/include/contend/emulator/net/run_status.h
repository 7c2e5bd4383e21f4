#pragma once
// What `contend emu status` prints, as contend.emu-status/1 documents (docs/emulator.md): per
// node its namespace, whether it exists and its addresses, per link its ends and current rate
// (read from the kernel when the run is up), and the processes inside the run's namespaces; a run
// whose state or scenario cannot be read, or an orphan, with its "problem" and "namespaces".
// Thread-safe (each call opens its own sockets).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contend/emulator/net/leftovers.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

// Run `run` of `scenario`: nodes, interfaces and links with their current rates ("processes" is
// the caller's to add).
nlohmann::ordered_json run_status(const std::string& run, const Scenario& scenario);
// A surveyed run: as above when its scenario was read, else its problem and namespaces; with its
// processes.
nlohmann::ordered_json run_status(const RunSurvey& survey);
// [{"pid", "netns", "command"}] of `processes`.
nlohmann::ordered_json processes_json(const std::vector<NetnsProcess>& processes);

}  // namespace contend::emulator
