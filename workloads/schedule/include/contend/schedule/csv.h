#pragma once
// Per-rank CSV in PyTorch pipelining's layout (torch.distributed.pipelining's _dump_csv and
// _load_csv): one row per rank, one action per cell ("0F3", "1I2", "1SEND_F3"), an empty cell is
// an idle step. Pure; thread-safe.

#include <string>
#include <string_view>

#include "contend/common/result.h"
#include "contend/schedule/schedule.h"
#include "contend/schedule/validation.h"

namespace contend::schedule {

enum class CsvLayout {
  // Compute schedules: cell t of a row is what the rank runs at time step t when every F, B, I and
  // W takes one step and transfers are free, so the warm-up bubbles show as empty cells, as in
  // PyTorch's generated compute schedules. Lowered schedules are always written compact.
  kAligned,
  // Each row is the rank's action list, no idle cells.
  kCompact,
};

// The CSV text, rows padded with empty cells to the same length, "\n" line ends.
// kDeadlock when an aligned compute schedule cannot run to the end (validate() first).
Result<std::string> to_csv(const Schedule& schedule, CsvLayout layout = CsvLayout::kAligned);

// A schedule read from a CSV, with where each action stood: columns[r][i] is the 1-based column
// of rank r's action i, for error messages (validate(table.schedule, table.columns)).
struct CsvTable {
  Schedule schedule;
  ActionColumns columns;
};

// Reads a schedule in PyTorch's _dump_csv layout: row r is rank r; a cell is an action ("0F3",
// "1I2", "2W0", "1SEND_F3"), empty (an idle step, skipped), or PyTorch's composite
// "(0F7;7B3)OVERLAP_F_B", read as its actions in order (contend runs them one after the other);
// "\r\n" and spaces are accepted. The stage count is the highest stage + 1, the micro-batch count
// the highest micro-batch + 1. The placement is inferred from which rank holds each stage's
// actions (left empty when it is the looped stage % ranks). `name` becomes Schedule::name and
// starts every error: kParse for a bad cell, "sched.csv: row 2, column 5: expected an action like
// ..."; kUnsupported for PyTorch's UNSHARD, RESHARD, REDUCE_GRAD; kInvalidArgument for a stage
// with actions on two ranks (naming it, both rows and columns) or on none. Does not validate().
Result<CsvTable> read_csv_table(std::string_view text, const std::string& name);

// read_csv_table's schedule.
Result<Schedule> from_csv(std::string_view text, const std::string& name);

}  // namespace contend::schedule
