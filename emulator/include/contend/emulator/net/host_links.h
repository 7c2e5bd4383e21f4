#pragma once
// One cluster host's share of a scenario (hosts mode, ansible/): the host's own interface shaped
// per peer (Shaper cluster mode: one HTB class per peer address; on a fabric one class for the
// host's NIC link, holding the traffic to every peer's address), and the scenario's links that
// touch this node mapped onto those classes, so the player (player.h) replays the timeline on
// every host for its own links. Each host shapes its egress: a link shaped in both directions is
// shaped by both of its hosts. Not thread-safe: one thread sets rates and samples.

#include <map>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/network.h"
#include "contend/emulator/net/shaper.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct HostPlan {
  std::string node;                              // this host's node in the scenario
  std::string ifname;                            // its interface toward the others
  std::map<std::string, std::string> addresses;  // peer node -> its address on that network
  double default_bps = 100e9;                    // traffic to anyone else (class 1:2)
};

// Whether a cluster host can stand for `node` of `s`: a host (the switches are the cluster's own),
// and on a fabric one whose one link joins a switch (its NIC: a cluster host shapes its one
// interface). kInvalidArgument for a switch or an unknown node, kUnsupported naming the links.
Result<void> check_cluster_host(const Scenario& s, const std::string& node);

class HostLinks : public LinkControl {
 public:
  // Shapes `plan.ifname` (in the namespace of `sock`) for every link of `plan.node` whose
  // direction leaves this host, at the link's base rate. check_cluster_host's errors;
  // kInvalidArgument when a peer's address is missing; the shaper's errors otherwise. The qdisc is
  // removed when the HostLinks is destroyed.
  static Result<HostLinks> create(const Scenario& scenario, const HostPlan& plan, NlSocket sock);

  // Sets `link`'s rate on this host's class for it; links that do not leave this host are
  // another host's business (ok, nothing done).
  Result<void> set_rate(const std::string& link, double rate_bps) override;
  Result<std::vector<LinkSample>> sample() override;
  // Refused: a cluster's links are hosts' real NICs, which contend never takes down (that would
  // cut the host off, SSH included).
  Result<void> set_link_state(const std::string& link, bool up) override;
  // The links shaped here, in class order.
  const std::vector<std::string>& links() const { return links_; }

 private:
  HostLinks(Shaper shaper, std::string node, std::vector<std::string> links)
      : shaper_(std::move(shaper)), node_(std::move(node)), links_(std::move(links)) {}
  Shaper shaper_;
  std::string node_;
  std::vector<std::string> links_;  // links_[i] is peer class i
};

}  // namespace contend::emulator
