#pragma once
// A run's results folder: created exclusively, never overwritten, and continued only by the same
// experiment in the same mode. Layout (docs/experiment-format.md): env.json, cells.jsonl (one
// line per finished cell, contend.cell/1), runs/, events/, traces/, summary.json/.csv, report/.
// Thread-safe (no shared state); two runs never get the same folder.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contend/common/fd.h"
#include "contend/common/result.h"
#include "results/link_bytes.h"
#include "results/tenants.h"
#include "results/throughput.h"

namespace contend::runner {

// Creates `requested` (which must not exist) or, when empty, `default_path`, taking
// `default_path`-2, -3, ... when it is taken (by another run started in the same second), with its
// runs/, events/ and traces/ folders. Returns the folder. kInvalidArgument when `requested`
// exists; errors name the path.
Result<std::string> create_results_dir(const std::string& requested, const std::string& default_path);

// Checks that `dir` is a results folder of `experiment` run in `mode` ("real" or "simulated"),
// begun with the same experiment and scenario files (`files`: their fingerprint, env.json's
// "files_fingerprint", where it has one), from its env.json, and that nothing it holds that a run
// writes is a symbolic link (results are never written through one); kInvalidArgument saying
// which differs or which is a link.
Result<void> check_resume(const std::string& dir, const std::string& experiment, const std::string& mode,
                          const std::string& files);

// The repetitions a results folder's run was begun with (env.json's "repetitions", which
// RunOptions::repetitions records), so a resumed run keeps them; 0 when it began with the
// experiment's own, or when `dir` is no results folder (check_resume says so). kParse or
// kInvalidArgument for a count that is not a whole number from 1 to kMaxRepetitions.
Result<int> resumed_repetitions(const std::string& dir);

// The cells finished in a results folder, by id: what later steps read back of cells.jsonl.
struct FinishedCells {
  std::map<std::string, double> throughput;                   // samples/s
  std::map<std::string, std::vector<PortBytes>> link_bytes;   // the cells that recorded it
  std::map<std::string, std::vector<TenantGoodput>> tenants;  // the cells whose scenario has flows
};
// The cells finished in `dir` (cells.jsonl). kParse naming the file and line of a damaged entry,
// so a resumed run never mixes in what it cannot read, and kInvalidArgument naming the line of a
// cell this run would not have recorded: one that is not among `cells` (the matrix's ids; empty:
// any), one recorded twice, a throughput that is not a positive number.
Result<FinishedCells> finished_cells(const std::string& dir, const std::set<std::string>& cells = {});

// Locks `dir` for this run (flock on the folder itself, released with the Fd): kInvalidArgument
// when another run holds it (a second --resume of one folder would run its cells twice).
Result<Fd> lock_results_dir(const std::string& dir);

// A finished cell as measured: its throughput and, on a single host, what the hypervisor and what
// processes outside the run took of the machine's CPU meanwhile (cpu_times.h), what its
// traffic put on each shaped end, and what the other tenants' flows got.
struct MeasuredCell {
  double throughput = 0;
  std::optional<double> steal;
  std::optional<double> others_cpu;
  std::vector<PortBytes> link_bytes;   // what each shaped end sent (a cell run here; link_bytes.h)
  std::vector<TenantGoodput> tenants;  // each tenant's goodput (a cell run here; tenants.h)
};

// Appends one finished cell to `dir`/cells.jsonl: what was measured and how even its iterations were.
Result<void> record_cell(const std::string& dir, const std::string& id, const MeasuredCell& cell,
                         const IterationSpread& spread);

}  // namespace contend::runner
