#pragma once
// The socket flow generator: background TCP and UDP flows between the nodes of a run, the
// `contend` mode of scenarios. A flow's sink runs in the destination node's namespace and its
// source in the source node's (each on a thread that entered the namespace with setns: its
// sockets stay there). Sources bind the link's background address, so the link's HTB filter puts
// the flow in the background class; between nodes without a direct link the flow crosses the
// switch, unshaped. TCP: bulk streams, optionally paced (SO_MAX_PACING_RATE), congestion control
// per socket. UDP: batches of datagrams (sendmmsg, UDP GSO where the kernel has it) paced by a
// token bucket (flow_pacer.h); the sink takes GSO buffers whole (UDP GRO). TCP uses epoll; two
// threads a flow.
// Thread-safe: start, stop and stats may be called from any thread.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "contend/common/result.h"
#include "contend/emulator/net/topology.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

struct FlowEndpoints {
  std::string src_netns;
  std::string dst_netns;
  std::string src_address;  // "198.19.0.1"
  std::string dst_address;
  std::string via;  // the link's name, "fabric" or "switch"
};

// Hosts mode (`contend emu host`, ansible/): nodes are hosts, and flows run between the hosts'
// (streams only: a closed-loop flow's iterations wait on every flow's sink, on other hosts there)
// own addresses on the shaped interface, so a flow shares its peer's class with the workload
// (cluster mode has no background class). Every host plays the same timeline: the host a flow
// leaves runs its source, the host it reaches its sink. Sinks listen from the engine's creation
// on a port that is the same on every host (base_port + the flow's index among the scenario's
// flow names), so a source started on another host's clock finds them; a source retries its
// connection for connect_timeout_s while the peer's sink is not up yet.
struct HostFlowPlan {
  std::string node;
  std::string netns;                             // "": the current namespace
  std::string address;                           // this host's address ("": sinks listen on any)
  std::map<std::string, std::string> addresses;  // peer node -> its address
  int base_port = 41000;
  double connect_timeout_s = 10;
};

// Where `flow` runs in `plan`: the background addresses of the link joining its nodes (either
// direction), else on a fabric their NICs' addresses (routed through the switches, via
// "fabric"), else the nodes' control-bridge addresses. kNotFound for an unknown node.
Result<FlowEndpoints> flow_endpoints(const TopologyPlan& plan, const FlowSpec& flow);

struct FlowStats {
  std::string name;
  Protocol protocol = Protocol::kTcp;
  int streams = 1;
  double target_bps = 0;  // 0: unlimited
  std::string via;
  bool running = false;
  std::uint64_t bytes_received = 0;  // at the sink
  std::uint64_t bytes_sent = 0;      // by the source
  double active_s = 0;               // time the source was sending
  std::string error;                 // why it stopped early, if it did
  // When the source could not keep its target (sent below 99% of it over its time on): the rate
  // it did send at, the ceiling of this source on this machine and path; 0 when it kept it.
  double ceiling_bps = 0;
  std::string send_path;  // how the source sends: UDP batches and whether with GSO (or why not); "" for TCP
  // A closed-loop flow's job (FlowSpec::iterate_bytes > 0): the iterations it ended while the
  // engine ran and their median time (compute and communication; the first from the job's first
  // flow's start); 0 for a stream.
  bool closed_loop = false;
  std::uint64_t iterations = 0;
  double iteration_s = 0;

  // Bytes received over the time the flow was on (all its on-periods); 0 before it ran.
  double achieved_bps() const { return active_s > 0 ? 8.0 * static_cast<double>(bytes_received) / active_s : 0.0; }
};

class JobIterations;  // a closed-loop job's iterations (flows/job_iterations.h)

class FlowEngine {
 public:
  explicit FlowEngine(TopologyPlan plan);
  // Hosts mode: listens for every flow of `scenario` that reaches plan.node. kInvalidArgument
  // when a flow from this node goes to a node without an address; socket errors name the flow.
  static Result<std::unique_ptr<FlowEngine>> for_host(const Scenario& scenario, HostFlowPlan plan);
  ~FlowEngine();  // stops every flow and joins its threads
  FlowEngine(const FlowEngine&) = delete;
  FlowEngine& operator=(const FlowEngine&) = delete;

  // Whether `flow`'s source runs in this engine: always between namespaces; in hosts mode when
  // the flow leaves this host (start and stop of other flows do nothing here).
  bool source_here(const FlowSpec& flow) const;
  // Starts `flow`; returns when its sink listens and its source connected. kInvalidArgument when
  // a flow of that name runs; errors from the namespaces or sockets name the flow.
  Result<void> start(const FlowSpec& flow);
  // Stops a running flow (kNotFound otherwise); its counters stay in stats().
  Result<void> stop(const std::string& name);
  void stop_all();
  // One entry per flow name, in name order: a flow started several times (an on/off pattern)
  // has its episodes' bytes and active times summed. In hosts mode a host sees the bytes sent of
  // the flows it sources and the bytes received of those it sinks.
  std::vector<FlowStats> stats() const;

  struct Flow;

 private:
  FlowEngine() = default;
  Result<void> start_flow(const FlowSpec& flow, FlowEndpoints ends, int port, bool sink, bool source);
  int host_port(const std::string& flow) const;

  TopologyPlan plan_;
  std::optional<HostFlowPlan> host_;
  std::vector<std::string> host_flow_names_;  // sorted: a flow's port is base_port + its index
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::map<std::string, std::shared_ptr<JobIterations>> jobs_;  // closed-loop jobs by name
  int next_port_ = 41000;
};

}  // namespace contend::emulator
