#pragma once
// The single-host network of a scenario: one namespace per node (contend-<run>.<node>), one veth
// pair per scenario link, and a bridge "switch" in its own namespace (contend-<run>) with a port
// per node for any-to-any traffic. Neither run nor node names may contain '.', so a namespace
// names one node of one run (run "foo"'s node "bar-n0" is contend-foo.bar-n0, run "foo-bar"'s
// node "n0" contend-foo-bar.n0), and the switch's name, without a '.', is no node's. Addresses
// come from 198.18.0.0/15 (RFC 2544's benchmarking range): link i joins <198.18.a.b/30>
// (workload, on the veth) with a = i / 64, b = 4 (i mod 64); each end also holds a background
// address 198.19.a.b/32 on lo, reached from the other end by a host route through the link, from
// its own background address (so background flows take the shaped link, and programs that list
// interfaces, Open MPI, see one address per link); node j is 198.18.255.(j+1)/24 on the switch.
// Each node routes its link neighbours' other workload addresses through the link they share
// (host routes), so a program that listens on any of a node's addresses (NCCL picks one
// interface for all its peers) is reachable from every neighbour, through the shaped link.
// A fabric's switches (scenario.h) are namespaces too (contend-<run>.<switch>), which forward
// (ip_forward) and hash multipath routes on the 5-tuple (fib_multipath_hash_policy 1); the ends
// of a link that joins a switch hold no background address, and every namespace routes every
// host address on such a link through each neighbour on a shortest path to it (fabric_routes.h).
// A fabric's hosts have no port on the bridge: every byte between them crosses shaped ports.
// Created through libnl and setns, never by forking `ip`.

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct InterfacePlan {
  std::string node;
  std::string netns;
  std::string ifname;
  std::string address;             // "198.18.0.1/30"
  std::string background_address;  // "198.19.0.1/32", on lo; empty on switch ports
};

struct LinkPlan {
  std::string link;
  InterfacePlan from;
  InterfacePlan to;
  bool shape_from = true;  // shape from's egress (traffic from -> to)
  bool shape_to = true;    // shape to's egress (traffic to -> from)
};

// A gateway and the interface it is reached on.
struct NextHop {
  std::string via;
  std::string ifname;
};

// A host route in `netns`: `destination` (a /32) via one next hop, or several (a multipath route:
// the kernel spreads flows over them by a hash of the 5-tuple, as ECMP does), from `source`
// (empty: the kernel picks).
struct RoutePlan {
  std::string netns;
  std::string destination;
  std::vector<NextHop> hops;
  std::string source;
};

struct TopologyPlan {
  std::string run;
  std::vector<std::pair<std::string, std::string>> nodes;     // (node, netns): the hosts
  std::vector<std::pair<std::string, std::string>> switches;  // (switch, netns): a fabric's, which forward
  std::string switch_netns;                                   // the control bridge's
  std::vector<LinkPlan> links;
  std::vector<InterfacePlan> switch_ports;  // node ends of the switch veths ("cbr0")
  // Peers' background and other workload addresses; on a fabric, every host address from every
  // namespace along its shortest paths.
  std::vector<RoutePlan> routes;

  // Every namespace the plan creates: nodes, a fabric's switches, the control bridge's last.
  std::vector<std::string> namespaces() const;
  const LinkPlan* find_link(const std::string& name) const;
};

// Every namespace contend makes starts with this.
inline constexpr std::string_view kNetnsPrefix = "contend-";

// Names a run may have: 1-64 letters, digits, '-' or '_' (never '.': it separates the node), as
// long as a scenario's name may be.
bool valid_run_name(const std::string& run);
// Whether run `run` could have made namespace `netns`: its switch "contend-<run>", or a node's
// "contend-<run>.<node>" with a node name a scenario may hold. Teardown acts on nothing else,
// whatever a state file lists.
bool run_made(const std::string& run, const std::string& netns);
// "contend-<run>.<node>" (node names are letters, digits, '-' and '_': scenario.h).
std::string node_netns(const std::string& run, const std::string& node);
// "contend-<run>": the run's switch.
std::string switch_netns_of(const std::string& run);
// The run a contend namespace belongs to: what lies between "contend-" and the first '.' (or the
// end, for a switch); nullopt for a name that is not contend's.
std::optional<std::string> netns_run(const std::string& netns);
// The address of a CIDR: "198.18.0.1/30" -> "198.18.0.1"; an address without a prefix length
// comes back as it is.
std::string strip_prefix_length(const std::string& cidr);

// kInvalidArgument naming the counts unless one machine holds `scenario`'s namespaces (kMaxHosts
// hosts, kMaxSwitches switches; a generated fabric may be larger, for `contend emu predict`).
Result<void> fits_one_machine(const Scenario& scenario);

// The plan for `scenario` under `run` (pure). Requires valid_run_name(run) and at most 16320 links.
TopologyPlan plan_topology(const Scenario& scenario, const std::string& run);

// The bytes the nodes of `plan` have sent on the control bridge (every switch_ports end's
// counter, summed): what went between them around the shaped links. 0 without a bridge (a fabric).
Result<std::uint64_t> control_bridge_bytes(const TopologyPlan& plan);

// Owns the created namespaces (and so everything in them). Move-only; the destructor removes them
// (remove_namespaces) unless release() was called. Not thread-safe.
class Topology {
 public:
  // Creates everything in `plan`. kInvalidArgument when any of its namespaces exists (a run of
  // that name is up), kPermission without the privilege; on any failure, and when `cancel`
  // becomes true, removes what it made before returning.
  static Result<Topology> create(const TopologyPlan& plan, const std::atomic<bool>* cancel = nullptr);

  Topology(Topology&& other) noexcept;
  Topology& operator=(Topology&&) = delete;
  Topology(const Topology&) = delete;
  ~Topology();

  const TopologyPlan& plan() const { return plan_; }
  // Keeps everything after this object is gone (`contend emu up`).
  void release() { owned_.clear(); }

 private:
  explicit Topology(TopologyPlan plan) : plan_(std::move(plan)) {}
  TopologyPlan plan_;
  std::vector<std::string> owned_;
};

// The one teardown (Topology's destructor, tear_down_run in teardown.h): removes each of
// `namespaces` that exists, last first; everything a run made lives in them, so its interfaces,
// bridge and qdiscs go with them. Each name's hosts file goes too, whether or not its namespace is
// still there. Tries all; returns how many namespaces it removed, or the first failure.
Result<std::size_t> remove_namespaces(const std::vector<std::string>& namespaces);

}  // namespace contend::emulator
