#include "real/namespace_cell.h"

#include <unistd.h>

#include "contend/emulator/emulated_run.h"

namespace contend::runner {

namespace {

// A new run name for `cell`'s network (its namespaces are contend-<name>.<node>): short, and
// unlike any other process's or cell's.
std::string cell_run_name(const Cell& cell) {
  return "r" + std::to_string(::getpid() % 100000) + "-" + std::to_string(cell.repetition) +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000);
}

}  // namespace

Result<void> run_in_namespaces(const Experiment& e, const Cell& cell, const CellFiles& files, NamespaceCell& kind,
                               const std::atomic<bool>& stop) {
  const emulator::Scenario& scenario = e.scenarios[cell.scenario];
  // The run owner tears the network down whatever happens next, also after a failure half-way.
  auto net = emulator::EmulatedRun::up(scenario, cell_run_name(cell), e.scenario_files[cell.scenario], &stop);
  if (!net) {
    return net.error();
  }
  if (auto ok = kind.prepare(net->plan()); !ok) {
    return ok;
  }
  auto log = emulator::EventLog::open(files.events);
  if (!log) {
    return log.error();
  }
  // One time 0 for the player, the processes and (through the truth) the oracle: the scenario's.
  const auto zero = std::chrono::steady_clock::now();
  net->play_in_background(std::move(*log), emulator::PlayerOptions{std::chrono::milliseconds(100), true, zero});
  auto processes = kind.start(net->plan(), std::chrono::duration<double>(zero.time_since_epoch()).count());
  if (!processes) {
    return processes.error();
  }
  auto ok = wait_processes(*processes, kind.names(), kind.timeout(), stop, [&] { return net->play_failed(); });
  end_all(*processes);  // the others of a process that failed would wait for it
  if (!ok) {
    return ok;
  }
  if (auto played = net->finish_play(); !played) {
    return with_context(played.error(), "the scenario player");
  }
  return kind.finish(net->plan());
}

}  // namespace contend::runner
