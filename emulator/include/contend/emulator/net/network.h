#pragma once
// Network: a scenario's topology with its links shaped, and the LinkControl the player drives.
// Not thread-safe: one thread sets rates and samples.

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/shaper.h"
#include "contend/emulator/net/topology.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct LinkSample {
  std::string link;
  std::string node;  // the end whose egress this is
  ClassStats stats;
};

// What the player needs from a network; tests use an in-memory fake.
class LinkControl {
 public:
  virtual ~LinkControl() = default;
  // Sets `link`'s rate on every shaped end, in place; in force when it returns.
  virtual Result<void> set_rate(const std::string& link, double rate_bps) = 0;
  // Counters of every class of every shaped end.
  virtual Result<std::vector<LinkSample>> sample() = 0;
  // Takes `link` down (both ends' interfaces) or up again; a fabric's routes follow.
  virtual Result<void> set_link_state(const std::string& link, bool up) = 0;
};

// No links to control: a play of flows only (`contend flows`). Sampling finds nothing; a rate
// change is an error naming the link.
class NoLinks final : public LinkControl {
 public:
  Result<void> set_rate(const std::string& link, double /*rate_bps*/) override {
    return make_error(Errc::kInvalidArgument, "no link " + link + " to set a rate on: this play controls no links");
  }
  Result<std::vector<LinkSample>> sample() override { return std::vector<LinkSample>{}; }
  Result<void> set_link_state(const std::string& link, bool /*up*/) override {
    return make_error(Errc::kInvalidArgument, "no link " + link + " to take down or up: this play controls no links");
  }
};

class Network : public LinkControl {
 public:
  // Creates the topology `plan` (plan_topology of `scenario`) and shapes every link at its base
  // rate. Fails before creating anything when the scenario needs netem and the kernel lacks it
  // (kUnsupported naming sch_netem), or when the run is up already. Everything is removed again on
  // failure, on `cancel`, and when the Network is destroyed unless release()d.
  static Result<Network> create(const Scenario& scenario, TopologyPlan plan, const std::atomic<bool>* cancel);
  // Controls the network of `plan` that `contend emu up` left in place; owns nothing.
  static Result<Network> attach(const Scenario& scenario, TopologyPlan plan);

  Network(Network&&) noexcept = default;
  Network& operator=(Network&&) = delete;
  ~Network() override = default;

  Result<void> set_rate(const std::string& link, double rate_bps) override;
  Result<std::vector<LinkSample>> sample() override;
  // On a fabric, the routes are computed again without the links that are down and replaced in
  // every namespace where they changed (deleted where no path is left).
  Result<void> set_link_state(const std::string& link, bool up) override;
  const TopologyPlan& plan() const { return plan_; }
  // Leaves namespaces and qdiscs in place after this object is gone.
  void release();

 private:
  Network() = default;
  // Gives every shaped end of every link the Shaper that `make` returns for it.
  Result<void> shape(const Scenario& scenario,
                     const std::function<Result<Shaper>(NlSocket, const LinkSpec&, const InterfacePlan&)>& make);
  struct ShapedEnd {
    std::string node;
    std::string netns;
    Shaper shaper;
  };
  // Replaces the fabric's routes planned with `was_down` by those planned with down_.
  Result<void> reroute(const std::set<std::string>& was_down);
  Result<nl_sock*> socket_in(const std::string& netns);
  Scenario layout_;  // the scenario's hosts, switches and links (not its events)
  std::set<std::string> down_;
  std::map<std::string, NlSocket> sockets_;  // by namespace, opened when first needed
  TopologyPlan plan_;
  std::optional<Topology> topology_;                    // destroyed after the shapers
  std::map<std::string, std::vector<ShapedEnd>> ends_;  // by link name
};

}  // namespace contend::emulator
