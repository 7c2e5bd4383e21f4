#include "contend/emulator/emulated_run.h"

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "contend/emulator/net/netns.h"
#include "contend/emulator/net/processes.h"
#include "contend/emulator/net/run_state.h"
#include "contend/emulator/net/teardown.h"
#include "contend/emulator/net/topology.h"

namespace contend::emulator {
namespace {

std::string absolute(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

}  // namespace

EmulatedRun::EmulatedRun(const Scenario& scenario, std::string run, Network net, bool owned)
    : scenario_(&scenario), run_(std::move(run)), owned_(owned), tear_down_(owned) {
  net_.emplace(std::move(net));
  net_->release();  // the teardown is ours: tear_down_run, from the state
  flows_ = std::make_unique<FlowEngine>(net_->plan());
}

EmulatedRun::EmulatedRun(EmulatedRun&& other) noexcept
    : scenario_(other.scenario_),
      run_(std::move(other.run_)),
      net_(std::move(other.net_)),
      flows_(std::move(other.flows_)),
      owned_(other.owned_),
      tear_down_(other.tear_down_),
      player_stop_(std::move(other.player_stop_)),
      play_ended_(std::move(other.play_ended_)),
      log_(std::move(other.log_)),
      player_(std::move(other.player_)),
      played_(std::move(other.played_)) {
  CONTEND_CHECK(!player_.joinable(), "EmulatedRun moved while its player runs");
  other.tear_down_ = false;
  other.net_.reset();
}

EmulatedRun::~EmulatedRun() {
  stop_player();
  flows_.reset();  // every flow stopped before the namespaces go
  net_.reset();
  if (tear_down_) {
    if (auto removed = tear_down_run(run_); !removed) {
      std::fprintf(stderr, "contend: tearing down run %s: %s\n", run_.c_str(), removed.error().message.c_str());
    }
  }
}

Result<EmulatedRun> EmulatedRun::up(const Scenario& scenario, const std::string& run, const std::string& scenario_file,
                                    const std::atomic<bool>* cancel) {
  if (const auto existing = run_namespaces(run); !existing.empty()) {
    return make_error(Errc::kInvalidArgument, "run " + run + " is up already (" + netns_path(existing.front()) +
                                                  " exists); `contend emu down --run " + run + "` first");
  }
  if (auto ok = fits_one_machine(scenario); !ok) {
    return ok.error();
  }
  TopologyPlan plan = plan_topology(scenario, run);
  // Intent first, then the network: whatever happens from here, tear_down_run removes it.
  if (auto ok = write_run_state({run, absolute(scenario_file), plan.namespaces()}); !ok) {
    return ok.error();
  }
  auto net = Network::create(scenario, std::move(plan), cancel);
  if (!net) {
    (void)tear_down_run(run);
    return net.error();
  }
  return EmulatedRun(scenario, run, std::move(*net), true);
}

Result<EmulatedRun> EmulatedRun::up_or_attach(const Scenario& scenario, const std::string& run,
                                              const std::string& scenario_file, const std::atomic<bool>* cancel) {
  auto state = read_run_state(run);
  if (!state) {
    return state.error();
  }
  if (!state->has_value()) {
    return up(scenario, run, scenario_file, cancel);
  }
  auto net = Network::attach(scenario, plan_topology(scenario, run));
  if (!net) {
    return net.error();
  }
  return EmulatedRun(scenario, run, std::move(*net), false);
}

Result<void> EmulatedRun::restore_base() {
  if (owned_) {
    return {};  // just built, at the base rates
  }
  for (const LinkSpec& l : scenario_->links) {
    if (auto ok = net_->set_rate(l.name, l.rate_bps); !ok) {
      return with_context(ok.error(), "putting the kept network back to the scenario's base rates");
    }
  }
  return {};
}

Result<PlayReport> EmulatedRun::play(EventLog& log, const std::atomic<bool>& stop, const PlayerOptions& options) {
  CONTEND_CHECK(!player_.joinable(), "EmulatedRun::play while playing in the background");
  if (auto ok = restore_base(); !ok) {
    return ok.error();
  }
  return emulator::play(*scenario_, *net_, log, stop, options, flows_.get());
}

void EmulatedRun::play_in_background(EventLog log, const PlayerOptions& options) {
  CONTEND_CHECK(!player_.joinable(), "EmulatedRun: one play at a time");
  *player_stop_ = false;
  *play_ended_ = false;
  log_.emplace(std::move(log));
  player_ = std::thread([this, options] {
    auto restored = restore_base();
    played_ = restored ? emulator::play(*scenario_, *net_, *log_, *player_stop_, options, flows_.get())
                       : Result<PlayReport>(restored.error());
    play_ended_->store(true, std::memory_order_release);
  });
}

std::optional<Error> EmulatedRun::play_failed() const {
  if (!play_ended_->load(std::memory_order_acquire) || played_.ok()) {
    return std::nullopt;
  }
  return played_.error();
}

Result<PlayReport> EmulatedRun::finish_play() {
  stop_player();
  return played_;
}

void EmulatedRun::stop_player() {
  if (player_.joinable()) {
    *player_stop_ = true;
    player_.join();
  }
}

}  // namespace contend::emulator
