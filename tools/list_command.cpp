#include "list_command.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "contend/common/json.h"
#include "contend/common/records.h"
#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/scenario/events.h"
#include "contend/emulator/scenario/fabric_registry.h"
#include "contend/emulator/scenario/pattern_registry.h"
#include "contend/emulator/scenario/traffic_registry.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/policy/policy.h"
#include "contend/pipeline/transport/transport.h"
#include "contend/runner/experiment/job_output.h"
#include "contend/schedule/registry.h"

namespace contend::tools {
namespace {

struct Family {
  const char* title;
  std::vector<const SpecEntry*> entries;
  std::vector<std::pair<std::string, std::string>> not_built;
};

// The kinds of scenario event (emulator/scenario/events.h): not specs, but listed alike.
std::vector<const SpecEntry*> event_kind_entries() {
  static const std::vector<SpecEntry> kEntries = [] {
    std::vector<SpecEntry> out;
    for (const emulator::EventKindInfo& k : emulator::kEventKinds) {
      out.push_back({"event kind", k.name, k.help, {}});
    }
    return out;
  }();
  std::vector<const SpecEntry*> out;
  for (const SpecEntry& e : kEntries) {
    out.push_back(&e);
  }
  return out;
}

std::vector<Family> families() {
  return {{"schedules", schedule::schedule_entries(), {}},
          {"policies", pipeline::policy_entries(), {}},
          {"backends", pipeline::backends().entries(), pipeline::backends().not_built()},
          {"transports", pipeline::transports().entries(), pipeline::transports().not_built()},
          {"disciplines", emulator::disciplines().entries(), {}},
          {"patterns", emulator::timeline_patterns().entries(), {}},
          {"traffic patterns", emulator::traffic_patterns().entries(), {}},
          {"fabrics", emulator::fabric_kinds().entries(), {}},
          {"event kinds", event_kind_entries(), {}},
          {"output parsers", runner::output_parsers().entries(), {}},
          {"commands", commands().entries(), {}}};
}

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::kInteger:
      return "integer";
    case ParamType::kNumber:
      return "number";
    case ParamType::kSize:
      return "size";
    case ParamType::kChoice:
      return "choice";
    case ParamType::kText:
      return "text";
    case ParamType::kIntegerList:
      return "integer list";
  }
  return "";
}

nlohmann::ordered_json entry_json(const SpecEntry& e) {
  auto params = nlohmann::ordered_json::array();
  for (const ParamDef& d : e.params) {
    params.push_back({{"key", d.key},
                      {"type", type_name(d.type)},
                      {"default", d.fallback ? nlohmann::ordered_json(*d.fallback) : nlohmann::ordered_json()},
                      {"help", d.help}});
  }
  return {{"name", e.name}, {"syntax", syntax(e)}, {"help", e.help}, {"params", params}};
}

int print_json() {
  auto doc = json_document("list", 1);
  for (const Family& f : families()) {
    auto entries = nlohmann::ordered_json::array();
    for (const SpecEntry* e : f.entries) {
      entries.push_back(entry_json(*e));
    }
    auto missing = nlohmann::ordered_json::array();
    for (const auto& [name, needs] : f.not_built) {
      missing.push_back({{"name", name}, {"needs", needs}});
    }
    doc[f.title] = {{"entries", entries}, {"not_built", missing}};
  }
  std::cout << doc.dump(2) << "\n";
  return 0;
}

int print_table() {
  for (const Family& f : families()) {
    TableWriter table({{"syntax", f.title, -44, "", nullptr}, {"help", "", -1, "", nullptr}});
    for (const SpecEntry* e : f.entries) {
      (void)table.write({{"syntax", syntax(*e)}, {"help", e->help}});
    }
    for (const auto& [name, needs] : f.not_built) {
      (void)table.write({{"syntax", name}, {"help", "not built here (needs " + needs + ")"}});
    }
    std::cout << table.text() << "\n";
  }
  return 0;
}

}  // namespace

std::function<int()> add_list_command(CLI::App& sub) {
  auto json = std::make_shared<bool>(false);
  CLI::App* list = &sub;
  list->add_flag("--json", *json, "Print contend.list/1 JSON");
  return [json] { return *json ? print_json() : print_table(); };
}

}  // namespace contend::tools
