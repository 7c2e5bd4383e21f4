#pragma once
// The name -> generator table. A spec is "<name>" or "<name>:<key>=<value>[,<key>=<value>]", or
// "<name>:<value>" for the generator's first parameter: "1f1b", "gpipe", "kfkb:k=2", "kfkb:2",
// "interleaved:v=2". Thread-safe (the table is immutable).

#include <string>
#include <string_view>
#include <vector>

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"

namespace contend::schedule {

struct GeneratorInfo {
  std::string name;    // "kfkb"
  std::string syntax;  // "kfkb:k=N"
  std::string help;    // one line
};

// Every registered generator, in the order `contend sim --help` lists them.
const std::vector<GeneratorInfo>& generators();

// Builds the compute schedule that `spec` names for `ranks` ranks and `microbatches`
// micro-batches. kInvalidArgument for an unknown name, an unknown or missing parameter, a value
// out of range or ranks/microbatches < 1, quoting the spec and listing what is allowed.
Result<Schedule> make_schedule(std::string_view spec, int ranks, int microbatches);

}  // namespace contend::schedule
