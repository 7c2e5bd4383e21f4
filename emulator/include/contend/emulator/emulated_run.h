#pragma once
// EmulatedRun: the one owner of an emulated run's life on this host, for `contend run`'s cells
// and `contend emu up|play`. It records the run's intent first (a state file naming every
// namespace it will make: `contend emu down` finds a run killed half-way through building), then
// builds and shapes the network from one topology plan, plays the scenario with its background
// flows, and when it goes tears everything down (processes in its namespaces, the network, the
// state) unless kept. Not thread-safe: one owner; between play_in_background() and
// finish_play() the player has the network to itself.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "contend/common/result.h"
#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/player.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

class EmulatedRun {
 public:
  // Brings run `run` of `scenario` up, recording `scenario_file` (made absolute) in its state.
  // kInvalidArgument when the run is up already; `cancel` stops the build half-way. On failure
  // nothing is left. `scenario` must outlive the run.
  static Result<EmulatedRun> up(const Scenario& scenario, const std::string& run, const std::string& scenario_file,
                                const std::atomic<bool>* cancel);
  // The run as `contend emu up` left it, when it is up (attached: kept when this object goes);
  // else up() (owned).
  static Result<EmulatedRun> up_or_attach(const Scenario& scenario, const std::string& run,
                                          const std::string& scenario_file, const std::atomic<bool>* cancel);

  EmulatedRun(EmulatedRun&& other) noexcept;
  EmulatedRun& operator=(EmulatedRun&&) = delete;
  ~EmulatedRun();

  const std::string& run() const { return run_; }
  const TopologyPlan& plan() const { return net_->plan(); }
  // Whether the run was brought up by this object (else attached).
  bool owned() const { return owned_; }
  // Leaves the network and its state in place when this object goes (`emu up`, `play --keep`).
  void keep() { tear_down_ = false; }
  // Whether this object's end tears the run down.
  bool tears_down() const { return tear_down_; }

  // Plays the scenario on this thread until its end or `stop` (player.h's play()); an attached
  // network (kept by `emu up` or an earlier `play --keep`) is put back to the scenario's base rates
  // first, so the play's start line says what the links are.
  Result<PlayReport> play(EventLog& log, const std::atomic<bool>& stop, const PlayerOptions& options);
  // Plays it on a thread of its own, into `log` (which the run keeps), until finish_play(),
  // which stops it and says how it went.
  void play_in_background(EventLog log, const PlayerOptions& options);
  Result<PlayReport> finish_play();
  // The error a background play ended with before finish_play() (the network no longer the
  // scenario's: player.h), once it has; nullopt while it plays or when it ended well. Callable
  // from the owner's thread while the player runs.
  std::optional<Error> play_failed() const;

 private:
  EmulatedRun(const Scenario& scenario, std::string run, Network net, bool owned);
  void stop_player();
  Result<void> restore_base();

  const Scenario* scenario_;
  std::string run_;
  std::optional<Network> net_;
  std::unique_ptr<FlowEngine> flows_;
  bool owned_ = false;
  bool tear_down_ = false;
  std::unique_ptr<std::atomic<bool>> player_stop_ = std::make_unique<std::atomic<bool>>(false);
  std::unique_ptr<std::atomic<bool>> play_ended_ = std::make_unique<std::atomic<bool>>(false);  // played_ is set
  std::optional<EventLog> log_;                                                                 // a background play's
  std::thread player_;
  Result<PlayReport> played_ = PlayReport{};
};

}  // namespace contend::emulator
