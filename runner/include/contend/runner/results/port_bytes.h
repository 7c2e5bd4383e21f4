#pragma once
// What a cell's traffic put on one shaped end of the scenario's network (a link's egress at one
// node, a fabric's port): cells.jsonl's and summary.json's "link_bytes" entries.

#include <cstdint>
#include <optional>
#include <string>

namespace contend::runner {

struct PortBytes {
  std::string link;
  std::string node;                       // the end whose egress this is
  std::uint64_t bytes = 0;                // everything it sent
  std::optional<std::uint64_t> workload;  // the workload class's share (HTB); nullopt: not split
};

}  // namespace contend::runner
