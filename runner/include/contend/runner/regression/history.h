#pragma once
// A history of runs (docs/regression.md): results folders of one experiment on one machine, one
// per commit, read in the order they ran; per cell, the series of the runs' medians and its change
// points (change_points.h) with the commit where each began. Runs of different experiments, modes
// or machines are refused, never mixed. Reading touches files; the rest is pure.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/runner/regression/change_points.h"
#include "contend/runner/regression/verdict.h"
#include "contend/runner/results/summary.h"

namespace contend::runner {

struct Run {
  std::string path;     // the results folder
  std::string commit;   // env.json's git_commit ("" when it has none)
  std::string machine;  // host, CPU model and count, from env.json
  std::string started;  // env.json's "started"
  std::string files;    // the experiment files' fingerprint
  Summary summary;
};
// One run from a results folder: its env.json and summary.json (an error naming the file when
// either is missing or cut short: a run still going, or killed).
Result<Run> read_run(const std::string& folder);
// Every source a results folder, a folder of them (each sub-folder holding an env.json, in the
// order they started), or a text file listing folders one per line ('#' begins a comment; in
// its order, relative paths from the list's folder).
Result<std::vector<Run>> read_runs(const std::vector<std::string>& sources);
// The runs of `machine` ("" for all): kInvalidArgument when fewer than two remain, or when they
// are of more than one experiment, mode or machine (naming each with its count and a run of it).
Result<std::vector<Run>> one_history(std::vector<Run> runs, const std::string& machine);

struct CellSeries {
  std::string scenario;
  std::string schedule;
  std::vector<std::size_t> runs;     // indexes into History::runs of the runs that have the cell
  std::vector<double> values;        // each run's median of the quantity
  std::vector<ChangePoint> changes;  // indexes into `values`
};
struct History {
  std::vector<Run> runs;
  Quantity quantity = Quantity::kThroughput;
  double tolerance = 0.02;
  std::vector<CellSeries> cells;
  std::vector<std::size_t> files_changed;  // runs whose experiment files differ from the run before
};
// The series of every cell of the runs (in the first order a run shows them), with change points
// at least `tolerance` in size.
History history_of(std::vector<Run> runs, Quantity q, double tolerance, ChangePointOptions o = {});
// Whether the cell's latest change point is a loss: a regression still there at the last run.
bool ends_in_loss(const CellSeries& c);
nlohmann::ordered_json history_json(const History& h);
// Per cell: runs, first and last values, each change point with its run, commit and size.
std::string history_table(const History& h);

}  // namespace contend::runner
