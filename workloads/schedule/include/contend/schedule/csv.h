#pragma once
// Per-rank CSV in PyTorch pipelining's layout (torch.distributed.pipelining's _dump_csv and
// _load_csv): one row per rank, one action per cell ("0F3", "1SEND_F3"), an empty cell is an idle
// step. Pure; thread-safe.

#include <string>
#include <string_view>

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"

namespace contend::schedule {

enum class CsvLayout {
  // Compute schedules: cell t of a row is what the rank runs at time step t when every F and B
  // takes one step and transfers are free, so the warm-up bubbles show as empty cells, as in
  // PyTorch's generated compute schedules. Lowered schedules are always written compact.
  kAligned,
  // Each row is the rank's action list, no idle cells.
  kCompact,
};

// The CSV text, rows padded with empty cells to the same length, "\n" line ends.
// kDeadlock when an aligned compute schedule cannot run to the end (validate() first).
Result<std::string> to_csv(const Schedule& schedule, CsvLayout layout = CsvLayout::kAligned);

// Reads a schedule back: row r is rank r; empty cells are skipped; "\r\n" accepted. The stage
// count is the highest stage + 1 (a multiple of the rows), the micro-batch count the highest
// micro-batch + 1. `name` becomes Schedule::name and starts error messages with the row and
// column: "sched.csv: row 2, column 5: expected an action like ...". Does not validate().
Result<Schedule> from_csv(std::string_view text, const std::string& name);

}  // namespace contend::schedule
