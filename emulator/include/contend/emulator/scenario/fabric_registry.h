#pragma once
// The fabrics a scenario may name instead of writing its hosts, switches and links out
// ("fabric": {"<kind>": {parameters}}, docs/scenario-format.md#fabrics), in the one registry
// mechanism (common/registry.h): each item's entry is the kind's key and help, its kind the
// expansion, defined in scenario/fabrics/<key>.cpp. One line per kind in
// scenario/fabrics/registry.cpp. Every kind expands to the same model a file could write: hosts,
// switches and links between them. Thread-safe: the table is constant.

#include <string>
#include <vector>

#include "contend/common/json_reader.h"
#include "contend/common/registry.h"
#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct FabricModel {
  std::vector<std::string> hosts;
  std::vector<std::string> switches;
  std::vector<LinkSpec> links;
};

struct FabricKind {
  // Reads the kind's parameters (errors name their JSON path) and writes the model out.
  Result<FabricModel> (*expand)(const JsonReader& params) = nullptr;
};

using FabricItem = Registry<FabricKind>::Item;

// Every registered kind, in table order.
const Registry<FabricKind>& fabric_kinds();

}  // namespace contend::emulator
